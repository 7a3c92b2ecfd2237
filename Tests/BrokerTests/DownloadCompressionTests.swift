import CZstd
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

@testable import BrokerHTTP

/// The streamed downloads' `Content-Encoding: zstd` (`ResponseCoding`): sent only to a client that names
/// zstd, the same bytes once decompressed, readable as far as the producer got, and never a whole-looking
/// frame for a body that failed midway.
@Suite("Download compression")
struct DownloadCompressionTests {
    @Test("Accept-Encoding: zstd only when named with a weight above 0")
    func negotiation() {
        for header in [
            "zstd", "ZSTD", "gzip, deflate, br, zstd", "gzip;q=1.0, zstd;q=0.5", " zstd ; q=1 ", "zstd;q=0.001", "zstd;q=1.000", "zstd;Q=0.8",
        ] {
            #expect(ResponseCoding.acceptsZstd(header), "\(header)")
        }
        // Weights that are no qvalue (RFC 9110 §12.4.2) though `Double` reads them, or above 1.
        for header in [
            nil, "", "gzip", "gzip, deflate, br", "*", "zstd;q=0", "zstd;q=0.000", "zstd;q=abc", "zstd;q=2", "xzstd", "zstd-x",
            "zstd;q=1e-3", "zstd;q=0x1p-1", "zstd;q=nan", "zstd;q=inf", "zstd;q=.5", "zstd;q=0.0001", "zstd;q=1.001", "zstd;q=1.", "zstd;q=+1",
            "zstd;q=",
        ] {
            #expect(!ResponseCoding.acceptsZstd(header), "\(header ?? "nil")")
        }
    }

    @Test("a download is compressed for a client that accepts zstd, and reads back byte for byte")
    func compressedDownload() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            var samples: [(type: String, value: Double, at: String)] = []
            for minute in 0..<300 {
                let at = String(format: "2026-03-01T%02d:%02d:00Z", 8 + minute / 60, minute % 60)
                samples.append((type: "heart_rate", value: 60 + Double(minute % 40), at: at))
            }
            #expect(try await harness.upload(samples, token: parties.person).status == .ok)
            let id = try await harness.acceptedRequestID(parties, types: ["heart_rate"])
            for format in ["csv", "json", "fhir", "ndjson"] {
                let path = "/v1/single-requests/\(id)/data?format=\(format)"
                let plain = try await harness.request(.get, path, token: parties.company)
                let compressed = try await harness.request(
                    .get, path, token: parties.company, headers: [.acceptEncoding: "gzip, deflate, br, zstd"])
                #expect(plain.status == .ok && compressed.status == .ok)
                #expect(plain.headers[.contentEncoding] == nil)
                #expect(compressed.headers[.contentEncoding] == "zstd")
                // A cache must not give one client's coding, or format, to another.
                for response in [plain, compressed] {
                    let vary = Set(
                        (response.headers[values: .vary]).flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) })
                    #expect(vary == ["Accept", "Accept-Encoding"], "\(format): \(vary)")
                }
                #expect(compressed.headers[.contentType] == plain.headers[.contentType])
                let sent = Array(compressed.body.readableBytesView)
                #expect(sent.count * 5 < plain.body.readableBytes, "\(format): \(sent.count) bytes for \(plain.body.readableBytes)")
                let decoded = try Zstd.decompress(sent)
                #expect(decoded.complete)
                // The Bundle's timestamp is the time of each download; everything else is the same document.
                let (read, expected) = (String(decoding: decoded.bytes, as: UTF8.self), harness.text(plain))
                if format == "fhir" {
                    #expect(Self.withoutTimestamp(read) == Self.withoutTimestamp(expected))
                } else {
                    #expect(read == expected, "\(format)")
                }
            }

            // Refusals stay problem documents anyone can read, whatever the client accepts.
            let unknown = try await harness.request(
                .get, "/v1/single-requests/\(UUID())/data", token: parties.company, headers: [.acceptEncoding: "zstd"])
            #expect(unknown.status == .notFound)
            #expect(unknown.headers[.contentEncoding] == nil)
            #expect(try harness.object(unknown)["status"] as? Int == 404)

            // The person's own export goes through the same coding in its FHIR forms.
            let export = try await harness.request(.get, "/v1/me/export?format=ndjson", token: parties.person, headers: [.acceptEncoding: "zstd"])
            #expect(export.headers[.contentEncoding] == "zstd")
            let lines = try Zstd.decompress(Array(export.body.readableBytesView))
            #expect(lines.complete && String(decoding: lines.bytes, as: UTF8.self).split(separator: "\n").count == 300)
            // Not in JSON: the document puts the companies' names and purposes beside the person's profile, and a
            // compressed length would let a company that sees it test guesses of the profile (BREACH).
            let document = try await harness.request(.get, "/v1/me/export", token: parties.person, headers: [.acceptEncoding: "zstd"])
            #expect(document.status == .ok)
            #expect(document.headers[.contentEncoding] == nil)
            // Its format, as the FHIR forms', may come from `Accept`.
            #expect(document.headers[values: .vary] == ["Accept"])
            #expect(Set(export.headers[values: .vary]) == ["Accept", "Accept-Encoding"])
            #expect(try harness.object(document)["samples"] as? [[String: Any]] != nil)
        }
    }

    @Test("the console's downloads are coded as the API's")
    func consoleDownloads() async throws {
        try await TestHarness.run { harness in
            let parties = try await harness.requestParties()
            try await harness.uploadHeartRates((0..<50).map { TestHarness.time(minutes: $0) }, token: parties.person)
            let id = try await harness.acceptedRequestID(parties)
            let companyEmail = try #require(try harness.object(try await harness.request(.get, "/v1/me", token: parties.company))["email"] as? String)
            let company = ConsoleBrowser(harness)
            #expect(try await company.logIn(companyEmail, TestHarness.Company().password).status == .seeOther)
            let plain = try await company.send(.get, "/company/requests/\(id)/data.csv", body: nil, headers: [:])
            let compressed = try await company.send(
                .get, "/company/requests/\(id)/data.csv", body: nil, headers: [.acceptEncoding: "gzip, deflate, br, zstd"])
            #expect(plain.headers[.contentEncoding] == nil)
            #expect(compressed.headers[.contentEncoding] == "zstd")
            #expect(compressed.headers[.vary]?.contains("Accept-Encoding") == true)
            #expect(compressed.headers[.contentDisposition] == plain.headers[.contentDisposition])
            let decoded = try Zstd.decompress(Array(compressed.body.readableBytesView))
            #expect(decoded.complete && String(decoding: decoded.bytes, as: UTF8.self) == harness.text(plain))
        }
    }

    @Test("each chunk is flushed: what was sent so far decompresses to what was produced so far")
    func flushedChunks() throws {
        let compressor = try ZstdFrameCompressor()
        var sent: [UInt8] = []
        var produced: [UInt8] = []
        for round in 0..<5 {
            let chunk = Array(String(repeating: "{\"resourceType\":\"Observation\",\"round\":\(round)}\n", count: 1000).utf8)
            produced += chunk
            sent += try compressor.compress(chunk[...])
            let decoded = try Zstd.decompress(sent)
            #expect(decoded.bytes == produced)
            #expect(!decoded.complete)
        }
        sent += try compressor.compress([], end: true)
        let whole = try Zstd.decompress(sent)
        #expect(whole.bytes == produced && whole.complete)
    }

    @Test("a body that fails midway is sent without its frame's end, so it never reads as complete")
    func failedBodyIsNoWholeFrame() async throws {
        struct Broken: Error {}
        let content = AsyncThrowingStream<ArraySlice<UInt8>, any Error> { continuation in
            continuation.yield(Array(repeating: UInt8(ascii: "a"), count: 70_000)[...])
            continuation.yield(Array(repeating: UInt8(ascii: "b"), count: 70_000)[...])
            continuation.finish(throwing: Broken())
        }
        let body = ZstdBody(content: HTTPBody(content, length: .unknown, iterationBehavior: .single))
        var sent: [UInt8] = []
        await #expect(throws: Broken.self) {
            for try await piece in body { sent += piece }
        }
        let decoded = try Zstd.decompress(sent)
        #expect(decoded.bytes.count == 140_000)
        #expect(!decoded.complete)

        // The same body whole ends its frame, and its checksum is checked: a flipped byte fails to read.
        let whole = AsyncThrowingStream<ArraySlice<UInt8>, any Error> { continuation in
            continuation.yield(Array(repeating: UInt8(ascii: "a"), count: 70_000)[...])
            continuation.finish()
        }
        var complete: [UInt8] = []
        for try await piece in ZstdBody(content: HTTPBody(whole, length: .unknown, iterationBehavior: .single)) { complete += piece }
        #expect(try Zstd.decompress(complete).complete)
        complete[complete.count - 1] ^= 0xFF
        #expect(throws: Zstd.Failure.self) { try Zstd.decompress(complete) }
    }

    @Test("a download cut short by cancellation (the server stopping) never ends its frame")
    func cancelledBodyIsNoWholeFrame() async throws {
        // A producer that never finishes, as an 800 MB download still streaming when the server stops.
        let produced = ProducedByteStream(stallTimeout: .seconds(30)) { send in
            while await send(Array(repeating: UInt8(ascii: "x"), count: 65_536)) {}
        }
        let firstPiece = AsyncStream<Void>.makeStream()
        let reader = Task { () -> (sent: [UInt8], error: (any Error)?) in
            var sent: [UInt8] = []
            do {
                for try await piece in ZstdBody(content: produced.body) {
                    sent += piece
                    firstPiece.continuation.yield()
                }
                return (sent, nil)
            } catch {
                return (sent, error)
            }
        }
        for await _ in firstPiece.stream { break }
        reader.cancel()
        let (sent, error) = await reader.value
        #expect(error is CancellationError, "\(String(describing: error))")
        #expect(try !Zstd.decompress(sent).complete)
    }

    static func withoutTimestamp(_ bundle: String) -> String {
        bundle.replacingOccurrences(of: #""timestamp":"[^"]*""#, with: "", options: .regularExpression)
    }
}

/// The client's side of a zstd body, for the tests.
enum Zstd {
    struct Failure: Error { var message: String }

    /// What `frame` decompresses to, and whether it held a whole frame (its end and checksum read).
    static func decompress(_ frame: [UInt8]) throws -> (bytes: [UInt8], complete: Bool) {
        guard let stream = ZSTD_createDStream() else { throw Failure(message: "no memory") }
        defer { ZSTD_freeDStream(stream) }
        var output: [UInt8] = []
        var scratch = [UInt8](repeating: 0, count: ZSTD_DStreamOutSize())
        var left = 1
        try frame.withUnsafeBytes { raw in
            var source = ZSTD_inBuffer(src: raw.baseAddress, size: raw.count, pos: 0)
            repeat {
                let written = try scratch.withUnsafeMutableBytes { buffer -> Int in
                    var sink = ZSTD_outBuffer(dst: buffer.baseAddress, size: buffer.count, pos: 0)
                    left = ZSTD_decompressStream(stream, &sink, &source)
                    if ZSTD_isError(left) != 0 { throw Failure(message: String(cString: ZSTD_getErrorName(left))) }
                    return sink.pos
                }
                output += scratch[..<written]
                // Stop when the input is used up and nothing more came out.
                if source.pos == source.size && written < scratch.count { break }
            } while left != 0
        }
        return (output, left == 0)
    }
}
