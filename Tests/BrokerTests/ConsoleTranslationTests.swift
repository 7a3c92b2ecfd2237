import Foundation
import Mustache
import Testing

@testable import BrokerConsole
@testable import BrokerDomain

/// The console in every language (issue 30, item 4): both catalogs hold the same keys, every key a template
/// names is in both, every template renders in both without a missing key, and no template holds English
/// prose of its own (it reads every word from the catalog).
@Suite("Console translations")
struct ConsoleTranslationTests {
    static let console = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/BrokerConsole")
    static let templates = console.appendingPathComponent("Templates")

    static func catalog() throws -> ConsoleCatalog { try ConsoleCatalog.load(from: console.appendingPathComponent("Strings")) }

    static func templateFiles() throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: templates, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "mustache" }.sorted { $0.path < $1.path }
    }

    /// The `{name}` placeholders of a text.
    static func placeholders(_ text: String) -> Set<String> {
        Set(text.matches(of: /\{([A-Za-z]+)\}/).map { String($0.output.1) })
    }

    @Test("every language has every key, with the same placeholders, and none empty")
    func sameKeys() throws {
        let catalog = try Self.catalog()
        let english = try #require(catalog.texts[.en])
        #expect(english.count > 300, "the English catalog has \(english.count) keys")
        for language in Language.allCases {
            let texts = try #require(catalog.texts[language], "no catalog for \(language)")
            let missing = Set(english.keys).subtracting(texts.keys).sorted()
            let extra = Set(texts.keys).subtracting(english.keys).sorted()
            #expect(missing.isEmpty, "\(language) lacks: \(missing.joined(separator: ", "))")
            #expect(extra.isEmpty, "\(language) has keys English does not: \(extra.joined(separator: ", "))")
            for (key, text) in texts {
                #expect(!text.trimmingCharacters(in: .whitespaces).isEmpty, "\(language) \(key) is empty")
                if let original = english[key] {
                    #expect(Self.placeholders(text) == Self.placeholders(original), "\(language) \(key): placeholders differ from English")
                }
            }
        }
    }

    @Test("every key a template names is in every catalog")
    func templateKeys() throws {
        let catalog = try Self.catalog()
        var named = 0
        for file in try Self.templateFiles() {
            // Code only (comments show keys as examples); a literal ending in `.` starts a key built from a value, above.
            let text = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
                .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }.joined(separator: "\n")
            for match in text.matches(of: /\{\{\{?t\.([A-Za-z0-9_.\-]+)\}?\}\}/) {
                named += 1
                let key = String(match.output.1)
                for language in Language.allCases {
                    #expect(catalog.texts[language]?[key] != nil, "\(file.lastPathComponent) names \(key), which \(language) lacks")
                }
            }
        }
        #expect(named > 300, "the templates name only \(named) keys: the pattern no longer reads them")
    }

    @Test("every key the console's Swift names, or builds from a value, is in every catalog")
    func swiftKeys() throws {
        let catalog = try Self.catalog()
        var keys: [String] = []
        // Keys built from a value: every case of each value that has words.
        keys += SampleType.allCases.flatMap { ["type." + $0.rawValue, "unit." + $0.rawValue] } + ["type.position"]
        keys += PurposeOfUse.allCases.map { "purpose." + $0.code }
        keys += Role.allCases.flatMap { ["role." + $0.rawValue, "role.plural." + $0.rawValue] }
        keys += [SingleRequest.Status.pending, .accepted, .refused, .cancelled, .expired].map { "status." + $0.rawValue }
        keys += [SingleRequest.Subscription.Status.pending, .active, .ended, .expired].map { "subscription." + $0.rawValue }
        keys += [GroupRequest.Status.accepted, .refused].map { "groupStatus." + $0.rawValue }
        keys += Statistics.Bucket.allCases.map { "bucket." + $0.rawValue }
        keys += [Run.State.upcoming, .live, .finished, .cancelled].map { "runState." + $0.rawValue }
        keys += Wording.noticeKeys.map { "notice." + $0 }
        // Keys the Swift sources name as literals: `t("…")`, `strings["…"]`, `format("…"`, `plural("…"` (its
        // `.one` and `.other`).
        let sources = try FileManager.default.contentsOfDirectory(at: Self.console, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "swift" }
        var literal = 0
        for file in sources {
            // Code only (comments show keys as examples); a literal ending in `.` starts a key built from a value, above.
            let text = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
                .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }.joined(separator: "\n")
            for match in text.matches(of: /(?:\.t\(|strings\[|Strings\.current\[|format\(\s*|plural\()"([a-zA-Z][A-Za-z0-9_.\-]*)"/) {
                let key = String(match.output.1)
                guard !key.hasSuffix(".") else { continue }
                literal += 1
                keys += match.output.0.hasPrefix("plural") ? [key + ".one", key + ".other"] : [key]
            }
        }
        #expect(literal > 50, "found only \(literal) literal keys in the console's Swift: the pattern no longer reads them")
        for language in Language.allCases {
            let missing = Set(keys).filter { catalog.texts[language]?[$0] == nil }.sorted()
            #expect(missing.isEmpty, "\(language) lacks: \(missing.joined(separator: ", "))")
        }
    }

    /// Stands for every value a template asks for: every section shows (`truthy`) or every inverted one does,
    /// so two renderings reach every part of a template. `t` is left to the page's own, below it.
    struct Everything: MustacheParent, CustomStringConvertible {
        let truthy: Bool
        func child(named name: String) -> Any? { name == "t" || !truthy ? nil : self }
        var description: String { "x" }
    }

    @Test("every template renders in every language without a missing key", arguments: Language.allCases)
    func renderEveryTemplate(language: Language) async throws {
        let library = try await MustacheLibrary(directory: Self.templates.path)
        let strings = try Self.catalog().strings(for: language, fallback: false)
        for file in try Self.templateFiles() {
            let name = file.deletingPathExtension().lastPathComponent
            for truthy in [true, false] {
                let context: [String: Any] = ["t": strings.mustache]
                let html = try #require(library.render(RootContext(values: context, truthy: truthy), withTemplate: name), "\(name) did not render")
                let markers = Self.markers(in: html)
                #expect(markers.isEmpty, "\(name) (\(language), sections \(truthy ? "shown" : "hidden")) has a missing key")
            }
        }
    }

    /// The page's context: `t` is the catalog, anything else the stand-in.
    struct RootContext: MustacheParent {
        let values: [String: Any]
        let truthy: Bool
        func child(named name: String) -> Any? { values[name] ?? Everything(truthy: truthy).child(named: name) }
    }

    static func markers(in html: String) -> [String] {
        html.matches(of: /⟦[^⟧]*⟧/).map { String($0.output) }
    }

    @Test("no template holds English prose of its own")
    func noBareProse() throws {
        // What may stay as it is in every language: names, units, formats.
        let allowed: Set<String> = ["Data4Help", "Track4Run", "km", "m", "Ed25519", "base64"]
        for file in try Self.templateFiles() {
            var text = try String(contentsOf: file, encoding: .utf8)
            text = text.replacing(/<code>.*?<\/code>/.dotMatchesNewlines(), with: "")
            text = text.replacing(/\{\{\{?[^}]*\}?\}\}/, with: "")
            text = text.replacing(/<[^>]*>/.dotMatchesNewlines(), with: "")
            text = text.replacing(/\/[A-Za-z0-9\/\-]+/, with: "")  // a path shown as a link's text
            let words = Set(text.matches(of: /[A-Za-z][A-Za-z0-9]*/).map { String($0.output) }).subtracting(allowed)
            #expect(words.isEmpty, "\(file.lastPathComponent) has words outside the catalog: \(words.sorted().joined(separator: ", "))")
        }
    }

    @Test("dates, times and numbers follow the language")
    func formats() throws {
        let catalog = try Self.catalog()
        let moment = try #require(Timestamp.parse("2026-11-27T14:05:00Z"))
        let italian = catalog.strings(for: .it)
        let english = catalog.strings(for: .en)
        #expect(italian.time(moment) == "27 nov 2026, 14:05 UTC")
        #expect(english.time(moment) == "27 Nov 2026, 14:05 UTC")
        #expect(italian.decimal(72.45) == "72,5" || italian.decimal(72.45) == "72,4")
        #expect(english.decimal(72.5) == "72.5")
        #expect(italian.decimal(3) == "3")
        #expect(italian.number(12345) == "12.345")
        #expect(italian.day(CalendarDate(year: 2026, month: 3, day: 2)!) == "2 mar 2026")
        #expect(italian.plural("duration.days", count: 1).hasPrefix("Per 1 giorno"))
        #expect(italian.plural("duration.days", count: 2).hasPrefix("Per 2 giorni"))
    }
}
