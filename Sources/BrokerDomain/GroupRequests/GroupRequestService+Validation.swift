import Foundation

extension GroupRequestService {
    package static let ages = 0...150

    /// The creation an edge read, or `invalid` naming every problem at once: the edge's unreadable values in
    /// their places and every rule the readable rest breaks.
    package func creation(from read: CreationAsRead) throws -> Creation {
        let valid = try Self.validate(read, privacy: privacy)
        return Creation(
            types: valid.types, filters: valid.filters, demographics: valid.demographics, windowFrom: valid.windowFrom,
            windowTo: valid.windowTo, bucket: valid.bucket, purpose: read.purpose, subscriptionDays: valid.subscriptionDays,
            cellLoss: read.cellLoss, purposeCode: valid.purposeCode)
    }

    static func validate(_ creation: Creation, privacy: PrivacySettings) throws -> ValidCreation {
        try validate(CreationAsRead(creation), privacy: privacy)
    }

    /// Every problem at once. A value the edge could not read is reported with the edge's reason, and the
    /// rules that need it are skipped.
    static func validate(_ creation: CreationAsRead, privacy: PrivacySettings) throws -> ValidCreation {
        var errors: [GroupRequestViolation] = []
        func fail(_ field: GroupRequestField, _ message: String) { errors.append(GroupRequestViolation(field: field, message: message)) }
        var types: [SampleType] = []
        if creation.types.isEmpty { fail(.types, "name at least one type") }
        for (index, parsed) in creation.types.enumerated() {
            guard case .value(let type) = parsed else {
                if case .unreadable(let reason) = parsed { fail(.type(index: index), reason) }
                continue
            }
            if types.contains(type) { fail(.type(index: index), "is repeated") }
            types.append(type)
        }
        var filters: [GroupRequest.Filter] = []
        for (index, filter) in creation.filters.enumerated() {
            guard case .value(let type) = filter.type else {
                if case .unreadable(let reason) = filter.type { fail(.filterType(index: index), reason) }
                continue
            }
            for (field, bound) in [(GroupRequestField.filterMin(index: index), filter.min), (.filterMax(index: index), filter.max)]
            where bound.map({ !$0.isFinite }) == true {
                fail(field, "must be a finite number")
            }
            if let min = filter.min, let max = filter.max, min > max { fail(.filterMin(index: index), "must not be above max") }
            filters.append(GroupRequest.Filter(type: type, min: filter.min, max: filter.max))
        }
        for (field, age) in [(GroupRequestField.ageMin, creation.ageMin), (.ageMax, creation.ageMax)] {
            if let age, !ages.contains(age) { fail(field, "must be \(ages.lowerBound)–\(ages.upperBound)") }
        }
        if let min = creation.ageMin, let max = creation.ageMax, min > max { fail(.ageMin, "must not be above ageMax") }
        if case .unreadable(let reason) = creation.sex { fail(.sex, reason) }
        let demographics = GroupRequest.Demographics(ageMin: creation.ageMin, ageMax: creation.ageMax, sex: creation.sex?.read)
        if creation.filters.isEmpty && demographics.isEmpty { fail(.criteria, "give at least one filter or demographic criterion") }
        if case .unreadable(let reason) = creation.windowFrom { fail(.windowFrom, reason) }
        if case .unreadable(let reason) = creation.windowTo { fail(.windowTo, reason) }
        let from = creation.windowFrom.read
        let to = creation.windowTo.read
        if let from, let to {
            if from > to { fail(.windowFrom, "must not be after window.to") }
            if to.dayNumber - from.dayNumber > 3660 { fail(.windowTo, "the window may span at most ten years") }
        }
        if case .unreadable(let reason) = creation.bucket { fail(.bucket, reason) }
        let bucket = creation.bucket.read
        let purpose = creation.purpose.trimmingCharacters(in: .whitespacesAndNewlines)
        if !SingleRequestService.purposeLength.contains(purpose.count) { fail(.purpose, "must be 1–500 characters") }
        if case .unreadable(let reason) = creation.purposeCode { fail(.purposeCode, reason) }
        if let days = creation.subscriptionDays, !SingleRequestService.subscriptionDays.contains(days) {
            fail(.subscriptionDays, "must be 1–3650")
        }
        let cellLoss = creation.cellLoss ?? privacy.defaultCellLoss
        if !PrivacySettings.cellLossRange.contains(cellLoss) {
            fail(
                .cellLoss,
                "must be \(PrivacySettings.cellLossRange.lowerBound)–\(PrivacySettings.cellLossRange.upperBound) (ρ per cell)")
        }
        if let from, let to, let bucket, from <= to, types.count * bucket.starts(from: from, to: to).count > privacy.maximumCellsPerRelease {
            fail(
                .window,
                "types × buckets may be at most \(privacy.maximumCellsPerRelease) cells: "
                    + "a longer window needs a coarser bucket or fewer types")
        }
        guard errors.isEmpty, let from, let to, let bucket, let purposeCode = creation.purposeCode.read else {
            throw GroupRequestError.invalid(errors)
        }
        return ValidCreation(
            types: types, filters: filters, demographics: demographics, windowFrom: from, windowTo: to, bucket: bucket,
            purpose: purpose, subscriptionDays: creation.subscriptionDays, cellLoss: PrivacyLoss(rho: cellLoss), purposeCode: purposeCode)
    }

    /// A release dearer than one company's share of a person's yearly group cap (`PRIVACY_COMPANY_SHARE`)
    /// would be answered from nobody (everyone would be left out): a 422 that says so, rather than a refusal
    /// that looks like a small cohort. The share is at most the cap, so this covers the cap too.
    func ensureSomeoneCanAfford(_ cost: PrivacyLoss, cells: Int) throws {
        guard cost > privacy.companyShareLoss else { return }
        throw GroupRequestError.invalid([
            GroupRequestViolation(
                field: .window,
                message: "\(cells) cells cost ρ \(PrivacyFormat.rho(cost.rho)), more than one company may take from any person in "
                    + "twelve months (ρ \(PrivacyFormat.rho(privacy.companyShareLoss.rho)), PRIVACY_COMPANY_SHARE "
                    + "\(PrivacyFormat.rho(privacy.companyShare)) of their group cap of ρ \(PrivacyFormat.rho(privacy.personGroupBudget.rho))): "
                    + "ask for fewer buckets or types, or a lower privacy.cellLoss")
        ])
    }
}
