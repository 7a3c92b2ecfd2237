import BrokerDomain
import Configuration

extension PrivacySettings {
    /// Reads `PRIVACY_*` and `GROUP_RESULTS_LATENESS`; every value has a floor above zero noise.
    package init(reader: ConfigReader) throws {
        self.init()
        if let rho = try reader.decimalNumber("PRIVACY_CELL_RHO", in: Self.cellLossRange) { defaultCellLoss = rho }
        if let rho = try reader.decimalNumber("PRIVACY_COMPANY_BUDGET", in: 0.001...100) { companyBudget = rho }
        if let days = try reader.wholeNumber("PRIVACY_COMPANY_PERIOD_DAYS", in: 1...366) { companyPeriodDays = days }
        if let rho = try reader.decimalNumber("PRIVACY_PERSON_BUDGET", in: 0.01...100) { personBudget = rho }
        // Enough for at least a millionth of ρ per peer cell: below that a cell's loss would round to nothing.
        if let rho = try reader.decimalNumber("PRIVACY_PEER_RESERVE", in: 0.05...100) { peerReserve = rho }
        guard peerReserve < personBudget else {
            throw ConfigurationError.invalid("PRIVACY_PEER_RESERVE", "must be less than PRIVACY_PERSON_BUDGET (\(personBudget))")
        }
        // A fraction in (0, 1]: 0 would leave everyone out of every request, and above 1 one company could take
        // more than the whole cap (which the cap would stop anyway, so it would only read as a promise it isn't).
        if let share = try reader.decimalNumber("PRIVACY_COMPANY_SHARE", in: -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude) {
            guard share > 0 && share <= 1 else {
                throw ConfigurationError.invalid(
                    "PRIVACY_COMPANY_SHARE", "must be a fraction above 0 and at most 1 of each person's yearly group cap, not \(share)")
            }
            companyShare = share
        }
        // The cheapest request (one cell and the cohort's size at the lowest ρ per cell) must fit in the share,
        // or every request would be answered from nobody.
        guard companyShareFitsTheCheapestRequest else {
            throw ConfigurationError.invalid(
                "PRIVACY_COMPANY_SHARE",
                "leaves one company ρ \(companyShareRho) of a person's group cap (PRIVACY_PERSON_BUDGET − PRIVACY_PEER_RESERVE = "
                    + "\(personGroupBudgetRho)), less than the cheapest request (ρ \(Self.cheapestRequestRho)): raise it")
        }
        if let hours = try reader.wholeNumber("GROUP_RESULTS_LATENESS", in: 0...720) { latenessHours = hours }
    }
}
