import BrokerDomain
import BrokerHTTP

/// The console's form for a group request: its fields read into the service's terms, and the service's
/// field names mapped to the form's (one table, `fieldName`).
struct GroupRequestForm {
    /// The form's filter rows that name a type, in order: the service's filter `i` is row `filterRows[i]`.
    var filterRows: [Int]
    var read: GroupRequestService.CreationAsRead

    /// Every field the form has: an error on one of them is shown beside it.
    static let fieldNames: [String: String] = {
        let names =
            ["types", "ageMin", "ageMax", "sex", "windowFrom", "windowTo", "bucket", "purpose", "subscriptionDays", "cellLoss", "purposeCode"]
            + (1...3).flatMap { row in ["filterType\(row)", "filterMin\(row)", "filterMax\(row)"] }
        return Dictionary(uniqueKeysWithValues: names.map { ($0, $0) })
    }()

    /// The form's fields; numbers that are not numbers, and bounds without a type, are thrown as the form's errors.
    init(_ form: FormFields) throws {
        var errors: [FieldError] = []
        var filters: [GroupRequestService.CreationAsRead.Filter] = []
        filterRows = []
        for row in 1...3 {
            let min = FormValues.decimal(form["filterMin\(row)"], field: "filterMin\(row)", into: &errors)
            let max = FormValues.decimal(form["filterMax\(row)"], field: "filterMax\(row)", into: &errors)
            guard let type = form["filterType\(row)"] else {
                // Bounds without a type would silently widen the cohort the company meant.
                if form["filterMin\(row)"] != nil || form["filterMax\(row)"] != nil {
                    errors.append(FieldError(field: "filterType\(row)", message: "choose the data type these bounds apply to"))
                }
                continue
            }
            filterRows.append(row)
            filters.append(.init(type: GroupRequestService.CreationAsRead.sampleType(type), min: min, max: max))
        }
        let ageMin = FormValues.integer(form["ageMin"], field: "ageMin", into: &errors)
        let ageMax = FormValues.integer(form["ageMax"], field: "ageMax", into: &errors)
        let days = FormValues.integer(form["subscriptionDays"], field: "subscriptionDays", into: &errors)
        let cellLoss = FormValues.decimal(form["cellLoss"], field: "cellLoss", into: &errors)
        guard errors.isEmpty else { throw Problem.validationFailed(errors) }
        var sex: Parsed<Sex>?
        if let code = Wording.sexCode(form["sex"]) { sex = Sex(rawValue: code).map { Parsed.value($0) } ?? .unreadable("must be F or M") }
        let bucket: Parsed<Statistics.Bucket> =
            Statistics.Bucket(rawValue: form["bucket"] ?? "day").map { Parsed.value($0) } ?? .unreadable("must be day, week or month")
        read = GroupRequestService.CreationAsRead(
            types: form.values("types").map(GroupRequestService.CreationAsRead.sampleType), filters: filters, ageMin: ageMin, ageMax: ageMax,
            sex: sex,
            windowFrom: GroupRequestService.CreationAsRead.date(form["windowFrom"] ?? ""),
            windowTo: GroupRequestService.CreationAsRead.date(form["windowTo"] ?? ""),
            bucket: bucket,
            purpose: form["purpose"] ?? "", subscriptionDays: days, cellLoss: cellLoss,
            purposeCode: GroupRequestService.CreationAsRead.purposeCode(form["purposeCode"]))
    }

    /// The service's refusal with the form's field names, for `ConsoleRequest.submitting` to show beside them.
    func problem(_ violations: [GroupRequestViolation]) -> Problem {
        Problem.validationFailed(violations.map { FieldError(field: fieldName($0.field), message: $0.message) })
    }

    /// The form's name of a field the service names.
    func fieldName(_ field: GroupRequestField) -> String {
        switch field {
        case .types, .type: "types"
        case .filterType(let index): "filterType\(row(index))"
        case .filterMin(let index): "filterMin\(row(index))"
        case .filterMax(let index): "filterMax\(row(index))"
        case .ageMin: "ageMin"
        case .ageMax: "ageMax"
        case .sex: "sex"
        // No field of its own: shown beside the first filter.
        case .criteria: "filterType1"
        case .windowFrom: "windowFrom"
        case .windowTo: "windowTo"
        // The window's cost: shown beside its end, the field a company changes to shorten it.
        case .window: "windowTo"
        case .bucket: "bucket"
        case .purpose: "purpose"
        case .subscriptionDays: "subscriptionDays"
        case .cellLoss: "cellLoss"
        case .purposeCode: "purposeCode"
        }
    }

    private func row(_ index: Int) -> Int { filterRows.indices.contains(index) ? filterRows[index] : index + 1 }
}
