import BrokerDomain
import BrokerServer
import Configuration
import Synchronization

/// The settings `BrokerConfiguration` read, recorded as it reads them: what makes a flag known. Unknown
/// flags are found against this record rather than a hand-kept list, which could drift from the settings.
final class SettingsRead: AccessReporter, Sendable {
    private let flags = Mutex<Set<String>>([])

    func report(_ event: AccessEvent) {
        // The command-line provider's spelling: ["http", "port"] is --http-port.
        let flag = "--" + event.metadata.key.components.joined(separator: "-")
        _ = flags.withLock { $0.insert(flag) }
    }

    /// The first argument that is not a flag of a setting read, or a value before any flag, if any. A flag
    /// takes the values up to the next flag (`--trusted-proxies 10.0.0.1 10.0.0.2`), as the provider reads it.
    func unknownFlag(in arguments: [String]) -> String? {
        let known = flags.withLock { $0 }
        var afterFlag = false
        for argument in arguments {
            if argument.hasPrefix("--") {
                let name = String(argument.prefix { $0 != "=" })
                guard known.contains(name) else { return name }
                afterFlag = true
            } else if !afterFlag {
                return argument
            }
        }
        return nil
    }
}
