import BrokerDomain
import Configuration

extension DatabaseLimits {
    /// Reads `DATABASE_POOL_*`, `DATABASE_STATEMENT_TIMEOUT` and `DATABASE_LOCK_TIMEOUT`.
    package init(reader: ConfigReader) throws {
        self.init()
        if let size = try reader.wholeNumber("DATABASE_POOL_SIZE", in: 1...1000) { poolSize = size }
        if let seconds = try reader.wholeNumber("DATABASE_POOL_TIMEOUT", in: 1...600) {
            leaseTimeout = .seconds(seconds)
        }
        if let seconds = try reader.wholeNumber("DATABASE_STATEMENT_TIMEOUT", in: 0...86_400, zeroMeans: "no limit") {
            statementTimeout = seconds == 0 ? nil : .seconds(seconds)
        }
        if let seconds = try reader.wholeNumber("DATABASE_LOCK_TIMEOUT", in: 0...3_600, zeroMeans: "no limit") {
            lockTimeout = seconds == 0 ? nil : .seconds(seconds)
        }
    }
}
