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
        if let hours = try reader.wholeNumber("GROUP_RESULTS_LATENESS", in: 0...720) { latenessHours = hours }
    }
}
