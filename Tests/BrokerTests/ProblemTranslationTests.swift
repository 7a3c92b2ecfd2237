import Foundation
import HTTPTypes
import Testing

@testable import BrokerDomain
@testable import BrokerHTTP

/// Every problem's `title` and `detail` in Italian as well as English (issue 30, item 4). The texts are read
/// out of the sources, so a problem added without its Italian fails here, in the commit that adds it.
@Suite("Problem translations")
struct ProblemTranslationTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every text a problem is made with: the `title:` and `detail:` string literals of each `Problem(…)` and
    /// `Problem.status(…)` of the API, the console and the server, the `problem.detail =` assignments, and
    /// the domain's texts that become a problem's detail (a `WrongRole`'s, a closed run's, a refused
    /// check-in's …). Interpolations are `{}`, as `ProblemTranslation` keys them.
    static func problemTexts() throws -> [(file: String, text: String)] {
        var found: [(String, String)] = []
        for target in ["BrokerHTTP", "BrokerConsole", "BrokerServer", "BrokerDomain"] {
            let root = repository.appendingPathComponent("Sources/\(target)")
            let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
            for file in files where file.pathExtension == "swift" {
                let source = try String(contentsOf: file, encoding: .utf8)
                let name = file.lastPathComponent
                if target == "BrokerDomain" {
                    for label in ["WrongRole(", ".closed(", ".checkInRefused(", ".noActiveSubscription(", ".importFailed(", "restartedDetail = "] {
                        found += literals(after: label, in: source[...]).map { (name, $0) }
                    }
                    continue
                }
                var rest = source[...]
                while let call = rest.range(of: "Problem(") ?? rest.range(of: "Problem.status(") {
                    let arguments = balanced(rest[call.upperBound...])
                    for label in ["title: ", "detail: "] { found += literals(after: label, in: arguments).map { (name, $0) } }
                    rest = rest[call.upperBound...]
                }
                for label in ["problem.detail = ", "problem.title = "] { found += literals(after: label, in: source[...]).map { (name, $0) } }
            }
        }
        return found
    }

    /// The text up to the parenthesis that closes the one just opened (string literals skipped).
    static func balanced(_ text: Substring) -> Substring {
        var depth = 1
        var inString = false
        var previous: Character = " "
        for index in text.indices {
            let character = text[index]
            if character == "\"" && previous != "\\" {
                inString.toggle()
            } else if !inString && character == "(" {
                depth += 1
            } else if !inString && character == ")" {
                depth -= 1
                if depth == 0 { return text[..<index] }
            }
            previous = character
        }
        return text
    }

    /// Each one-line string literal that directly follows `label`, its interpolations written `{}`.
    static func literals(after label: String, in text: Substring) -> [String] {
        var result: [String] = []
        var rest = text
        while let found = rest.range(of: label + "\"") {
            var literal = ""
            var index = found.upperBound
            var depth = 0
            while index < rest.endIndex {
                let character = rest[index]
                if depth == 0 && character == "\"" { break }
                if depth == 0 && character == "\\" && rest.index(after: index) < rest.endIndex && rest[rest.index(after: index)] == "(" {
                    depth = 1
                    literal += "{}"
                    index = rest.index(index, offsetBy: 2)
                    continue
                }
                if depth > 0 {
                    if character == "(" { depth += 1 }
                    if character == ")" { depth -= 1 }
                } else if character == "\\" {
                    index = rest.index(after: index)
                    if index < rest.endIndex { literal.append(rest[index]) }
                } else {
                    literal.append(character)
                }
                index = rest.index(after: index)
            }
            result.append(literal)
            rest = rest[index...]
        }
        return result
    }

    @Test("every problem text in the sources has its Italian")
    func everyTextTranslated() throws {
        let texts = try Self.problemTexts()
        // The reading of the sources works: it finds the problems we know are there.
        #expect(texts.count > 100, "found only \(texts.count) problem texts: the scan no longer reads the sources")
        #expect(texts.contains { $0.text == "Too many failed logins; try again in {} seconds." })
        #expect(texts.contains { $0.text == "Only people join runs." })
        let missing = Set(texts.filter { ProblemTranslation.italian[$0.text] == nil }.map { "\($0.file): \($0.text)" }).sorted()
        #expect(missing.isEmpty, "no Italian for:\n\(missing.joined(separator: "\n"))")
    }

    @Test("every Italian text keeps the English one's values, and says something else")
    func translationsAreWhole() {
        for (english, italian) in ProblemTranslation.italian.merging(ProblemTranslation.italianFieldMessages, uniquingKeysWith: { a, _ in a }) {
            #expect(
                english.components(separatedBy: "{}").count == italian.components(separatedBy: "{}").count,
                "\(english) → \(italian): a value would be lost or invented")
            #expect(!italian.isEmpty)
        }
    }

    @Test("problems are translated whole, with their values, and keep their type and status")
    func concreteProblems() {
        let problems: [Problem] = [
            AccountError.tooManyAttempts(retryAfterSeconds: 42).problem, AccountError.registrationExpired(hours: 48).problem,
            AccountError.unauthenticated.problem, AccountError.wrongCredentials.problem, RunError.notFound.problem,
            RunError.fewerPlacesThanRunners(7).problem, WrongRole("Only people join runs.").problem, WrongRole().problem,
            Problem.status(.notFound), Problem.status(.methodNotAllowed), BodyTooLarge(maxBytes: 2 * 1024 * 1024).problem,
            PrivacyError.budgetExhausted(renewsAt: Date(timeIntervalSince1970: 1_800_000_000), cost: 0.25).problem,
            PrivacyError.budgetExhausted(renewsAt: nil, cost: 0.25).problem,
            Problem.validationFailed([FieldError(field: "email", message: "must contain exactly one @")]),
        ]
        for english in problems {
            let italian = english.localized(to: .it)
            #expect(italian.title != english.title, "\(english.title)")
            #expect(italian.detail != english.detail, "\(english.detail)")
            #expect(italian.slug == english.slug && italian.status == english.status)
            #expect(english.localized(to: .en).detail == english.detail)
            #expect(italian.errors.map(\.field) == english.errors.map(\.field))
        }
        #expect(
            AccountError.tooManyAttempts(retryAfterSeconds: 42).problem.localized(to: .it).detail
                == "Troppi accessi non riusciti; riprova tra 42 secondi.")
        #expect(
            Problem.validationFailed([FieldError(field: "name", message: "must be at most 200 characters")]).localized(to: .it).errors
                == [FieldError(field: "name", message: "deve avere al massimo 200 caratteri")])
        // A text no entry knows stays English rather than turning into another's.
        #expect(ProblemTranslation.text("Something new happened.", in: .it) == "Something new happened.")
    }
}
