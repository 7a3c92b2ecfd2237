/// A configuration value that is missing or malformed; the message names the variable.
package enum ConfigurationError: Error, CustomStringConvertible {
    case missing(String)
    case invalid(String, String)

    package var description: String {
        switch self {
        case .missing(let name): "\(name) is not set"
        case .invalid(let name, let why): "\(name) \(why)"
        }
    }
}
