import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerConsole
@testable import BrokerDomain
@testable import BrokerHTTP
@testable import BrokerServer

/// The download encoder's hand-written formatting agrees with the general formatters it replaces.
@Suite("Released sample encoder")
struct ReleasedSampleEncoderTests {
    @Test("times match Timestamp.rfc3339 and numbers round-trip in their shortest form")
    func formatting() throws {
        var generator = SystemRandomNumberGenerator()
        var encoder = ReleasedSampleEncoder(format: .csv)
        var expected = ["type,at,value,unit"]
        for index in 0..<20_000 {
            let type = SampleType.allCases[index % SampleType.allCases.count]
            let micros = Int64.random(in: -2_000_000_000_000_000...7_000_000_000_000_000, using: &generator)
            let whole = index % 3 == 0 ? micros / 1_000_000 * 1_000_000 : micros
            let at = Date(timeIntervalSince1970: Double(whole) / 1_000_000)
            let decimals = index % 6
            let value =
                index % 7 == 0
                ? Double.random(in: type.range, using: &generator)
                : (Double.random(in: type.range, using: &generator) * pow(10, Double(decimals))).rounded() / pow(10, Double(decimals))
            let start = encoder.bytes.count
            encoder.append(type: type, at: at, value: value)
            expected.append("\(type.rawValue),\(Timestamp.rfc3339(at)),\(ReleasedSampleEncoder.number(value)),\(type.unit)")
            let written = String(decoding: encoder.bytes[start...].dropLast(2), as: UTF8.self)
            let valueText = String(written.split(separator: ",")[2])
            #expect(Double(valueText) == value, "\(valueText) does not round-trip \(value)")
            #expect(valueText.count <= ReleasedSampleEncoder.number(value).count, "\(valueText) is longer than \(value)")
        }
        let lines = String(decoding: encoder.takeChunk(), as: UTF8.self).split(separator: "\r\n").map(String.init)
        #expect(lines.count == expected.count)
        for (line, wanted) in zip(lines, expected) {
            let (got, want) = (line.split(separator: ","), wanted.split(separator: ","))
            #expect(got[0] == want[0] && got[1] == want[1] && got[3] == want[3], "\(line) ≠ \(wanted)")
            #expect(Double(got[2]) == Double(want[2]))
        }
    }

    @Test("JSON items are a valid document with availableTypes and nextCursor")
    func json() throws {
        var encoder = ReleasedSampleEncoder(format: .json)
        encoder.append(type: .heartRate, at: Date(timeIntervalSince1970: 1_772_352_000.25), value: 72.5)
        encoder.append(type: .oxygenSaturation, at: Date(timeIntervalSince1970: 1_772_352_060), value: 97)
        encoder.finish(availableTypes: [.heartRate, .oxygenSaturation], nextCursor: "42")
        let text = String(decoding: encoder.takeChunk(), as: UTF8.self)
        #expect(
            text
                == #"{"items":[{"type":"heart_rate","at":"2026-03-01T08:00:00.25Z","value":72.5,"unit":"beats/min"},{"type":"oxygen_saturation","at":"2026-03-01T08:01:00Z","value":97,"unit":"%"}],"availableTypes":["heart_rate","oxygen_saturation"],"nextCursor":"42"}"#
        )
        _ = try JSONSerialization.jsonObject(with: Data(text.utf8))
    }
}
