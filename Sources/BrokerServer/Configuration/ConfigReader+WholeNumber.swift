import BrokerConsole
import BrokerDomain
import BrokerHTTP
import Configuration

extension ConfigReader {
    /// The environment variable `variable` (e.g. `RATE_LIMIT_UPLOADS_PER_MINUTE`) as a whole number in
    /// `range`, or nil when it is not set. Anything else is a configuration error that names the variable
    /// and the range (the reader's own `int` would silently fall back to the default).
    func wholeNumber(_ variable: String, in range: ClosedRange<Int>, zeroMeans: String? = nil) throws -> Int? {
        let key = ConfigKey(variable.lowercased().split(separator: "_").map(String.init))
        guard let text = string(forKey: key) else { return nil }
        guard let number = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(number) else {
            throw ConfigurationError.invalid(
                variable,
                "must be a whole number from \(range.lowerBound)\(zeroMeans.map { " (\($0))" } ?? "") to \(range.upperBound), not \"\(text)\"")
        }
        return number
    }
}

extension ConfigReader {
    /// The environment variable `variable` as a decimal number in `range`, or nil when it is not set.
    func decimalNumber(_ variable: String, in range: ClosedRange<Double>) throws -> Double? {
        let key = ConfigKey(variable.lowercased().split(separator: "_").map(String.init))
        guard let text = string(forKey: key) else { return nil }
        guard let number = Double(text.trimmingCharacters(in: .whitespaces)), number.isFinite, range.contains(number) else {
            throw ConfigurationError.invalid(variable, "must be a number from \(range.lowerBound) to \(range.upperBound), not \"\(text)\"")
        }
        return number
    }
}
