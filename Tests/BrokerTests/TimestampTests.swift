import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// `Timestamp`: the hand-written RFC 3339 parser and printers used for uploads, listings and COPY.
@Suite("Timestamp")
struct TimestampTests {
    /// Whole seconds since 1970 and the microseconds on top, as the parser meant them.
    private func parts(_ text: String) -> (seconds: Int, micros: Int)? {
        Timestamp.parse(text).map(Timestamp.split)
    }

    private static let march1 = 1_772_352_000  // 2026-03-01T08:00:00Z

    @Test(
        "UTC times, in every accepted spelling",
        arguments: [
            "2026-03-01T08:00:00Z", "2026-03-01t08:00:00z", "2026-03-01 08:00:00Z", "2026-03-01T08:00:00+00:00",
            "2026-03-01T08:00:00-00:00", "2026-03-01T09:00:00+01:00", "2026-03-01T02:30:00-05:30",
            "2026-03-02T07:59:00+23:59", "2026-02-28T08:01:00-23:59",
        ])
    func utcEquivalents(text: String) {
        let got = parts(text)
        #expect(got?.seconds == Self.march1, "\(text)")
        #expect(got?.micros == 0, "\(text)")
    }

    @Test(
        "offsets move the instant by exactly their hours and minutes",
        arguments: [
            ("+01:00", -3600), ("-01:00", 3600), ("+05:45", -20_700), ("-09:30", 34_200), ("+14:00", -50_400),
        ])
    func offsets(offset: String, shift: Int) {
        #expect(parts("2026-03-01T08:00:00" + offset)?.seconds == Self.march1 + shift)
    }

    @Test(
        "fractions of 1 to 9 digits, kept to the microsecond (truncated beyond)",
        arguments: [
            (".5", 500_000), (".05", 50_000), (".123", 123_000), (".1234", 123_400), (".12345", 123_450), (".123456", 123_456),
            (".1234567", 123_456), (".12345678", 123_456), (".123456789", 123_456), (".999999999", 999_999), (".000001", 1),
            (".0000009", 0), (".000000001", 0), (".0", 0), (".100000", 100_000),
        ])
    func fractions(fraction: String, micros: Int) {
        let got = parts("2026-03-01T08:00:00\(fraction)Z")
        #expect(got?.seconds == Self.march1, "\(fraction)")
        #expect(got?.micros == micros, "\(fraction)")
        // With an offset as well.
        let shifted = parts("2026-03-01T09:00:00\(fraction)+01:00")
        #expect(shifted?.seconds == Self.march1 && shifted?.micros == micros, "\(fraction)+01:00")
    }

    @Test("known instants far from 1970 and before it")
    func knownInstants() {
        #expect(parts("2000-02-29T00:00:00Z")?.seconds == 951_782_400)
        #expect(parts("1969-12-31T23:59:59Z")?.seconds == -1)
        #expect(parts("1969-12-31T23:59:59.5Z").map { [$0.seconds, $0.micros] } == [-1, 500_000])
        #expect(parts("1999-06-15T10:00:00Z")?.seconds == 929_440_800)
        #expect(parts("1900-01-01T00:00:00Z")?.seconds == -2_208_988_800)
        #expect(parts("2199-12-31T23:59:59Z")?.seconds == 7_258_118_399)
        #expect(parts("2026-12-31T23:59:59.999999Z").map { [$0.seconds, $0.micros] } == [1_798_761_599, 999_999])
    }

    @Test(
        "days that exist are accepted, leap days only in leap years",
        arguments: [
            "2024-02-29T12:00:00Z", "2000-02-29T12:00:00Z", "2026-01-31T12:00:00Z", "2026-04-30T12:00:00Z", "2026-12-31T23:59:59Z",
            "2026-03-01T00:00:00Z",
        ])
    func validDays(text: String) {
        #expect(Timestamp.parse(text) != nil, "\(text)")
    }

    @Test(
        "invalid dates and times are rejected",
        arguments: [
            "2026-02-30T08:00:00Z", "2026-02-29T08:00:00Z", "1900-02-29T08:00:00Z", "2026-04-31T08:00:00Z", "2026-13-01T08:00:00Z",
            "2026-00-10T08:00:00Z", "2026-03-00T08:00:00Z", "2026-03-32T08:00:00Z", "2026-03-01T24:00:00Z", "2026-03-01T08:60:00Z",
            "2026-03-01T08:00:60Z", "2026-03-01T08:00:00+24:00", "2026-03-01T08:00:00+01:60",
        ])
    func invalidDates(text: String) {
        #expect(Timestamp.parse(text) == nil, "\(text)")
    }

    @Test(
        "anything that is not an RFC 3339 time is rejected",
        arguments: [
            "", "yesterday", "2026-03-01", "2026-03-01T08:00Z", "2026-03-01T08:00:00", "2026-03-01T08:00:00.Z",
            "2026-03-01T08:00:00+0100", "2026-03-01T08:00:00+01", "2026-03-01T08:00:00Zx", "2026-03-01T08:00:00Z ",
            " 2026-03-01T08:00:00Z", "2026-3-01T08:00:00Z", "26-03-01T08:00:00Z", "2026/03/01T08:00:00Z", "2026-03-01X08:00:00Z",
            "2026-03-01T8:00:00Z", "２０２６-03-01T08:00:00Z", "2026-03-01T08:00:00.5.5Z", "2026-03-01T08:00:00,5Z",
            "+2026-03-01T08:00:00Z", "2026-03-01T08:00:00GMT", "1772352000",
        ])
    func garbage(text: String) {
        #expect(Timestamp.parse(text) == nil, "\(text)")
    }

    @Test("rfc3339 writes UTC, with a fraction only when there is one and without trailing zeros")
    func rfc3339Format() throws {
        #expect(Timestamp.rfc3339(try #require(Timestamp.parse("2026-03-01T09:00:00.25+01:00"))) == "2026-03-01T08:00:00.25Z")
        #expect(Timestamp.rfc3339(try #require(Timestamp.parse("2026-03-01T08:00:00.000Z"))) == "2026-03-01T08:00:00Z")
        #expect(Timestamp.rfc3339(try #require(Timestamp.parse("2026-03-01T08:00:00.000001Z"))) == "2026-03-01T08:00:00.000001Z")
        #expect(Timestamp.rfc3339(try #require(Timestamp.parse("2026-03-01T08:00:00.123456Z"))) == "2026-03-01T08:00:00.123456Z")
        #expect(Timestamp.rfc3339(try #require(Timestamp.parse("1969-12-31T23:59:59.5Z"))) == "1969-12-31T23:59:59.5Z")
        #expect(Timestamp.rfc3339(try #require(Timestamp.parse("1900-01-01T00:00:00Z"))) == "1900-01-01T00:00:00Z")
        #expect(Timestamp.rfc3339(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
    }

    @Test(
        "rfc3339 round-trips through parse to the microsecond",
        arguments: [
            "2026-03-01T08:00:00Z", "2026-03-01T08:00:00.1Z", "2026-03-01T08:00:00.123457Z", "2026-03-01T08:00:00.999999Z",
            "1999-06-15T10:00:00.000001Z", "1969-12-31T23:59:59.999999Z", "1900-01-01T00:00:00.3Z", "2100-02-28T23:59:59.7Z",
            "1900-01-01T00:00:00.000001Z", "2199-12-31T23:59:59.999999Z",
        ])
    func roundTrip(text: String) throws {
        let date = try #require(Timestamp.parse(text))
        #expect(Timestamp.rfc3339(date) == text)
        let again = try #require(Timestamp.parse(Timestamp.rfc3339(date)))
        #expect(Timestamp.split(again) == Timestamp.split(date))
    }

    @Test("rfc3339 round-trips every microsecond of a second, and many instants across the years")
    func roundTripSweep() throws {
        var failures: [String] = []
        for micros in stride(from: 0, to: 1_000_000, by: 997) {
            let text = "2026-03-01T08:00:00." + String(format: "%06d", micros) + "Z"
            let date = try #require(Timestamp.parse(text))
            if Timestamp.split(date).micros != micros { failures.append("parse \(text)") }
            if Timestamp.parse(Timestamp.rfc3339(date)).map(Timestamp.split) ?? (0, -1) != Timestamp.split(date) {
                failures.append("round trip \(text)")
            }
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let micros = Int.random(in: -2_000_000_000_000_000...4_000_000_000_000_000, using: &generator)
            let date = Date(timeIntervalSince1970: Double(micros) / 1_000_000)
            let text = Timestamp.rfc3339(date)
            let back = try #require(Timestamp.parse(text), "\(text)")
            if Timestamp.split(back) != Timestamp.split(date) { failures.append("\(micros) → \(text)") }
        }
        #expect(failures.isEmpty, "\(failures.prefix(10))")
    }

    @Test("every microsecond of a second round-trips at both ends of the accepted years", arguments: ["1900-01-01T00:00:00", "2199-12-31T23:59:59"])
    func microsecondsAtTheEnds(second: String) throws {
        var failures: [String] = []
        for micros in stride(from: 0, to: 1_000_000, by: 7) {
            var fraction = String(micros)
            fraction = String(repeating: "0", count: 6 - fraction.count) + fraction
            let text = second + "." + fraction + "Z"
            while fraction.hasSuffix("0") { fraction.removeLast() }
            let expected = second + (fraction.isEmpty ? "" : "." + fraction) + "Z"
            guard let date = Timestamp.parse(text) else {
                failures.append("parse \(text)")
                continue
            }
            if Timestamp.split(date).micros != micros || Timestamp.rfc3339(date) != expected {
                failures.append(text)
            }
        }
        #expect(failures.isEmpty, "\(failures.count) failures, e.g. \(failures.prefix(5))")
    }

    @Test("postgresText is PostgreSQL's COPY text form in UTC with six fraction digits")
    func postgresText() throws {
        #expect(Timestamp.postgresText(try #require(Timestamp.parse("2026-03-01T09:00:00.25+01:00"))) == "2026-03-01 08:00:00.250000+00")
        #expect(Timestamp.postgresText(try #require(Timestamp.parse("2026-03-01T08:00:00Z"))) == "2026-03-01 08:00:00.000000+00")
        #expect(Timestamp.postgresText(try #require(Timestamp.parse("2026-03-01T08:00:00.000001Z"))) == "2026-03-01 08:00:00.000001+00")
        #expect(Timestamp.postgresText(try #require(Timestamp.parse("1969-12-31T23:59:59.5Z"))) == "1969-12-31 23:59:59.500000+00")
        #expect(Timestamp.postgresText(try #require(Timestamp.parse("1999-06-15T10:00:00.123456Z"))) == "1999-06-15 10:00:00.123456+00")
        #expect(Timestamp.postgresText(Date(timeIntervalSince1970: 0)) == "1970-01-01 00:00:00.000000+00")
    }
}
