import BrokerDomain
import BrokerOpenAPI
import Foundation
import OpenAPIRuntime

extension BrokerAPI {
    func uploadSamples(_ input: Operations.UploadSamples.Input) async throws -> Operations.UploadSamples.Output {
        let principal = try await caller()
        let result: SampleStore.UploadResult
        switch input.body {
        case .json(let upload):
            let entries = upload.samples.map { SampleBatch.Entry(type: $0._type, value: $0.value, at: $0.at) }
            result = try await budgeted.storeSamples(entries, timeZone: upload.timeZone, by: principal, logger: logger)
        case .csv(let body):
            result = try await budgeted.storeSamples(csv: body, by: principal, logger: logger)
        case .applicationFhirJson(let bundle):
            let upload = try await budgeted.storeSamples(fhirBundle: bundle.value, by: principal, logger: logger)
            return .ok(
                .init(
                    body: .json(
                        .init(
                            accepted: upload.ingest.accepted, duplicates: upload.ingest.duplicates,
                            skipped: .init(additionalProperties: upload.skippedResources),
                            skippedObservations: upload.skippedObservations.isEmpty
                                ? nil : upload.skippedObservations.map { .init(entry: $0.entry, reason: $0.reason) }))))
        }
        return .ok(.init(body: .json(.init(accepted: result.accepted, duplicates: result.duplicates))))
    }

    func listSamples(_ input: Operations.ListSamples.Input) async throws -> Operations.ListSamples.Output {
        let principal = try await caller()
        let type = input.query._type.map(SampleType.init)
        let page = try await services.samples.list(
            principal, type: type, from: input.query.from, to: input.query.to,
            page: PageRequest(limit: input.query.limit, cursor: input.query.cursor), logger: logger)
        return .ok(.init(body: .json(.init(items: page.items.map(Components.Schemas.Sample.init), nextCursor: page.next?.text))))
    }

    func deleteSamples(_ input: Operations.DeleteSamples.Input) async throws -> Operations.DeleteSamples.Output {
        let principal = try await caller()
        guard case .json(let body) = input.body else { throw Problem.status(.unsupportedMediaType) }
        let (correction, deleted) = try await services.samples.correct(
            type: body._type, at: body.at, from: body.from, to: body.to, by: principal, logger: logger)
        return .ok(
            .init(
                body: .json(
                    .init(_type: .init(correction.type), from: correction.from, to: correction.to, deleted: deleted))))
    }

    func getStatistics(_ input: Operations.GetStatistics.Input) async throws -> Operations.GetStatistics.Output {
        let principal = try await caller()
        let type = SampleType(input.query._type)
        // Absent, the contract's default.
        let bucket = input.query.bucket.map(Statistics.Bucket.init) ?? .day
        let statistics = try await budgeted.statistics(
            principal, type: type, from: input.query.from, to: input.query.to, bucket: bucket, logger: logger)
        return .ok(
            .init(
                body: .json(
                    .init(
                        _type: input.query._type,
                        unit: type.unit,
                        aggregation: .init(type.aggregation),
                        timeZone: statistics.timeZone,
                        bucket: .init(bucket),
                        own: statistics.own.map {
                            .init(
                                start: $0.start.description, count: $0.count, days: $0.days, mean: $0.mean, min: $0.min, max: $0.max,
                                total: $0.total)
                        },
                        peers: .init(
                            group: statistics.group.name,
                            available: statistics.peersAvailable,
                            buckets: statistics.peerBuckets.map {
                                .init(
                                    start: $0.start.description, month: $0.month.description, people: $0.people,
                                    peopleMargin95: $0.peopleMargin95, p10: $0.p10, p10Margin95: $0.p10Margin95, p50: $0.p50,
                                    p50Margin95: $0.p50Margin95, p90: $0.p90, p90Margin95: $0.p90Margin95)
                            })))))
    }

    /// Never reached: `StreamingEndpoints` serves the export so it streams instead of being built in
    /// memory. Kept because the generated protocol requires it.
    func exportMe(_ input: Operations.ExportMe.Input) async throws -> Operations.ExportMe.Output {
        throw Problem.status(.internalServerError, detail: "The export is served by the streaming endpoint.")
    }
}

extension Components.Schemas.Sample {
    init(_ sample: Sample) {
        self.init(_type: .init(sample.type), value: sample.value, at: sample.at)
    }
}
