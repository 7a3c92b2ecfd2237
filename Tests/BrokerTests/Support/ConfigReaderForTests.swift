import Configuration

/// Configuration readers as `d4h serve` builds them, from a given environment instead of the process's.
enum ConfigReaderForTests {
    /// `environment` plus a `DATABASE_URL` (the one required setting) unless it sets its own.
    static func environment(_ environment: [String: String]) -> ConfigReader {
        ConfigReader(
            provider: EnvironmentVariablesProvider(
                environmentVariables: ["DATABASE_URL": "postgres://nobody@127.0.0.1:1/none"].merging(environment) { $1 }))
    }
}
