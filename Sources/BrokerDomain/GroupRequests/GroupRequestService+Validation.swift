import Foundation

extension GroupRequestService {
    package static let ages = 0...150

    /// Every problem of the body at once, as field errors.
    static func validate(_ creation: Creation, privacy: PrivacySettings) throws -> ValidCreation {
        var errors: [FieldError] = []
        var types: [SampleType] = []
        if creation.types.isEmpty { errors.append(FieldError(field: "types", message: "name at least one type")) }
        for (index, name) in creation.types.enumerated() {
            guard let type = SampleType(rawValue: name) else {
                errors.append(FieldError(field: "types[\(index)]", message: "is not a sample type"))
                continue
            }
            if types.contains(type) { errors.append(FieldError(field: "types[\(index)]", message: "is repeated")) }
            types.append(type)
        }
        var filters: [GroupRequest.Filter] = []
        for (index, filter) in creation.filters.enumerated() {
            guard let type = SampleType(rawValue: filter.type) else {
                errors.append(FieldError(field: "filters[\(index)].type", message: "is not a sample type"))
                continue
            }
            for (name, bound) in [("min", filter.min), ("max", filter.max)] where bound.map({ !$0.isFinite }) == true {
                errors.append(FieldError(field: "filters[\(index)].\(name)", message: "must be a finite number"))
            }
            if let min = filter.min, let max = filter.max, min > max {
                errors.append(FieldError(field: "filters[\(index)].min", message: "must not be above max"))
            }
            filters.append(GroupRequest.Filter(type: type, min: filter.min, max: filter.max))
        }
        for (name, age) in [("demographics.ageMin", creation.ageMin), ("demographics.ageMax", creation.ageMax)] {
            if let age, !ages.contains(age) { errors.append(FieldError(field: name, message: "must be \(ages.lowerBound)–\(ages.upperBound)")) }
        }
        if let min = creation.ageMin, let max = creation.ageMax, min > max {
            errors.append(FieldError(field: "demographics.ageMin", message: "must not be above ageMax"))
        }
        var sex: Sex?
        if let text = creation.sex {
            sex = Sex(rawValue: text)
            if sex == nil { errors.append(FieldError(field: "demographics.sex", message: "must be F or M")) }
        }
        let demographics = GroupRequest.Demographics(ageMin: creation.ageMin, ageMax: creation.ageMax, sex: sex)
        if creation.filters.isEmpty && demographics.isEmpty {
            errors.append(FieldError(field: "filters", message: "give at least one filter or demographic criterion"))
        }
        let from = CalendarDate(iso: creation.windowFrom)
        let to = CalendarDate(iso: creation.windowTo)
        if from == nil { errors.append(FieldError(field: "window.from", message: "must be a date as YYYY-MM-DD")) }
        if to == nil { errors.append(FieldError(field: "window.to", message: "must be a date as YYYY-MM-DD")) }
        if let from, let to {
            if from > to { errors.append(FieldError(field: "window.from", message: "must not be after window.to")) }
            if to.dayNumber - from.dayNumber > 3660 {
                errors.append(FieldError(field: "window.to", message: "the window may span at most ten years"))
            }
        }
        let bucket = Statistics.Bucket(rawValue: creation.bucket)
        if bucket == nil { errors.append(FieldError(field: "bucket", message: "must be day, week or month")) }
        let purpose = creation.purpose.trimmingCharacters(in: .whitespacesAndNewlines)
        if !SingleRequestService.purposeLength.contains(purpose.count) {
            errors.append(FieldError(field: "purpose", message: "must be 1–500 characters"))
        }
        if let days = creation.subscriptionDays, !SingleRequestService.subscriptionDays.contains(days) {
            errors.append(FieldError(field: "subscription.days", message: "must be 1–3650"))
        }
        let cellLoss = creation.cellLoss ?? privacy.defaultCellLoss
        if !PrivacySettings.cellLossRange.contains(cellLoss) {
            errors.append(
                FieldError(
                    field: "privacy.cellLoss",
                    message: "must be \(PrivacySettings.cellLossRange.lowerBound)–\(PrivacySettings.cellLossRange.upperBound) (ρ per cell)"))
        }
        if let from, let to, let bucket, from <= to, types.count * bucket.starts(from: from, to: to).count > privacy.maximumCellsPerRelease {
            errors.append(
                FieldError(
                    field: "window",
                    message: "types × buckets may be at most \(privacy.maximumCellsPerRelease) cells: "
                        + "a longer window needs a coarser bucket or fewer types"))
        }
        guard errors.isEmpty, let from, let to, let bucket else { throw GroupRequestError.invalid(errors) }
        return ValidCreation(
            types: types, filters: filters, demographics: demographics, windowFrom: from, windowTo: to, bucket: bucket,
            purpose: purpose, subscriptionDays: creation.subscriptionDays, cellLoss: PrivacyLoss(rho: cellLoss))
    }

    /// A release dearer than a person's yearly group cap would be answered from nobody (everyone would be
    /// left out): a 422 that says so, rather than a refusal that looks like a small cohort.
    func ensureSomeoneCanAfford(_ cost: PrivacyLoss, cells: Int) throws {
        guard cost > privacy.personGroupBudget else { return }
        throw GroupRequestError.invalid([
            FieldError(
                field: "window",
                message: "\(cells) cells cost ρ \(PrivacyFormat.rho(cost.rho)), more than any person may give to group "
                    + "requests in twelve months (ρ \(PrivacyFormat.rho(privacy.personGroupBudget.rho))): ask for fewer buckets or types, "
                    + "or a lower privacy.cellLoss")
        ])
    }
}
