import Foundation

/// Settings as a JSON file, replaced atomically so a crash mid-write leaves the old settings, never half of new ones.
public struct FileSOSSettingsStore: SOSSettingsStore {
    public let url: URL

    public init(url: URL) { self.url = url }

    public func load() throws -> SOSSettings? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        return try JSONDecoder().decode(SOSSettings.self, from: Data(contentsOf: url))
    }

    public func save(_ settings: SOSSettings) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try encoder.encode(settings).write(to: url, options: .atomic)
    }
}
