import BrokerDomain
import Foundation

/// The console's texts in every language, read once from `Strings/<language>.json` (see `ConsoleStrings`).
struct ConsoleCatalog: Sendable {
    let texts: [Language: [String: String]]
    let prefixes: Set<String>

    /// Loaded once per process: the files are part of the build, like the templates.
    static let shared: ConsoleCatalog = (try? load()) ?? ConsoleCatalog(texts: [:], prefixes: [])

    static func load() throws -> ConsoleCatalog {
        guard let directory = Bundle.module.url(forResource: "Strings", withExtension: nil) else { throw ConsoleResourcesMissing() }
        return try load(from: directory)
    }

    /// The catalogs in `directory` (the bundle's copy, or the sources' for a test).
    static func load(from directory: URL) throws -> ConsoleCatalog {
        var texts: [Language: [String: String]] = [:]
        for language in Language.allCases {
            let data = try Data(contentsOf: directory.appendingPathComponent("\(language.rawValue).json"))
            texts[language] = try JSONDecoder().decode([String: String].self, from: data)
        }
        var prefixes = Set<String>()
        for key in texts.values.flatMap(\.keys) {
            var parts = key.split(separator: ".").dropLast()
            while !parts.isEmpty {
                prefixes.insert(parts.joined(separator: "."))
                parts = parts.dropLast()
            }
        }
        return ConsoleCatalog(texts: texts, prefixes: prefixes)
    }

    /// `fallback: false` is for tests: a key this language lacks then shows as its marker.
    func strings(for language: Language, fallback: Bool = true) -> ConsoleStrings {
        ConsoleStrings(
            language: language, texts: texts[language] ?? [:],
            fallback: fallback && language != .fallback ? texts[.fallback] : nil, prefixes: prefixes)
    }
}
