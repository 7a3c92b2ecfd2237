import BrokerDomain
import Foundation
import Mustache

/// Everything the console says, in one language: `Strings/<language>.json`, a flat object of dotted keys
/// (`"inbox.pending.title": "Waiting for your answer"`). Templates read them as `{{t.inbox.pending.title}}`;
/// Swift reads them as `strings["inbox.pending.title"]` or, with values, `strings.format("key", ["name": …])`
/// (the text holds `{name}`). One template serves every language; adding a key means adding it to every
/// file, which `ConsoleTranslationTests` checks (a key in one file and not another, or a template naming a
/// key no file has, fails it).
///
/// Flat JSON files rather than Swift tables: a translator edits one file per language without reading Swift,
/// the files diff line by line, and a new page adds its keys without touching code another page shares.
struct ConsoleStrings: Sendable {
    let language: Language
    /// This language's texts.
    let texts: [String: String]
    /// English's, for a key this language lacks: a page with one English sentence beats a page with a hole.
    /// Tests render without it (`fallback: nil`), so the missing key shows as `⟦key⟧` and fails them.
    let fallback: [String: String]?
    /// Every leading part of a key (`inbox`, `inbox.pending`), so a template can walk the tree.
    let prefixes: Set<String>

    /// The strings of the page being rendered. Set once per request by `Console.serve` from the page's
    /// language, so the helpers that word things (`Wording`, `HealthChart`, `ImportPage`) and every page's
    /// static helpers speak it without a parameter threaded through each of them (and through the pages that
    /// other work adds meanwhile). Outside a request (a test calling a helper), English.
    @TaskLocal static var current: ConsoleStrings = ConsoleCatalog.shared.strings(for: .fallback)

    /// What a key missing from every catalog renders as: visible, and easy for a test to look for.
    static func missing(_ key: String) -> String { "⟦\(key)⟧" }

    subscript(_ key: String) -> String {
        texts[key] ?? fallback?[key] ?? Self.missing(key)
    }

    /// The text of `key` with each `{name}` replaced by `values[name]`.
    func format(_ key: String, _ values: [String: String]) -> String {
        var text = self[key]
        for (name, value) in values { text = text.replacingOccurrences(of: "{\(name)}", with: value) }
        return text
    }

    /// The text of `key.one` or `key.other` by `count` (both languages say "1 giorno", "2 giorni" alike), with
    /// `{count}` written in the language's numbers.
    func plural(_ key: String, count: Int, _ values: [String: String] = [:]) -> String {
        format(key + (count == 1 ? ".one" : ".other"), values.merging(["count": number(count)]) { a, _ in a })
    }

    /// A whole number as the language writes it: "12,345" / "12.345".
    func number(_ value: Int) -> String {
        value.formatted(.number.locale(language.locale))
    }

    /// Up to one decimal, without a trailing zero: "72.5" / "72,5".
    func decimal(_ value: Double) -> String {
        value.formatted(.number.precision(.fractionLength(0...1)).grouping(.never).locale(language.locale))
    }

    /// "27 Nov 2026, 14:05 UTC" / "27 nov 2026, 14:05 UTC": the day spelled out so that 03/04 means one thing
    /// to every reader, and the server's clock zone named.
    func time(_ date: Date?) -> String {
        guard let date else { return "" }
        // Day and time apart: the locales join them differently ("27 Nov 2026 at 14:05"), and one comma reads
        // the same in both.
        let clock = Date.FormatStyle(date: .omitted, time: .omitted, locale: language.locale, timeZone: TimeZone(identifier: "UTC")!)
            .hour(.twoDigits(amPM: .omitted)).minute(.twoDigits)
        return day(date) + ", " + date.formatted(clock) + " UTC"
    }

    /// "27 Nov 2026" / "27 nov 2026".
    func day(_ date: Date?) -> String {
        guard let date else { return "" }
        return date.formatted(Date.FormatStyle(date: .abbreviated, time: .omitted, locale: language.locale, timeZone: TimeZone(identifier: "UTC")!))
    }

    /// A calendar day (a person's local day) as `day(_:)` writes it.
    func day(_ date: CalendarDate) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return day(calendar.date(from: DateComponents(year: date.year, month: date.month, day: date.day)))
    }

    /// What templates see as `t`: the keys as a tree, `{{t.inbox.title}}` reading `inbox.title`.
    var mustache: Node { Node(strings: self, prefix: "") }

    /// One level of the key tree. A name that is a key gives its text; a name that starts keys gives the next
    /// level; any other gives the missing-key marker, so a typo in a template shows on the page (and fails
    /// the test) instead of rendering nothing.
    struct Node: MustacheParent, CustomStringConvertible, Sendable {
        let strings: ConsoleStrings
        let prefix: String

        /// A template that prints a level rather than a key (`{{t.inbox}}`) shows the marker too.
        var description: String { ConsoleStrings.missing(prefix + ".…") }

        func child(named name: String) -> Any? {
            let key = prefix.isEmpty ? name : prefix + "." + name
            if let text = strings.texts[key] { return text }
            if strings.prefixes.contains(key) { return Node(strings: strings, prefix: key) }
            return strings.fallback?[key] ?? ConsoleStrings.missing(key)
        }
    }
}
