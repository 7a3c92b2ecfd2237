import Foundation
import Logging
import NIOCore

/// The live feed's JSON, as the event stream sends it (the contract's `RunLive`, the same document as
/// `GET /v1/runs/{id}/live`'s). Written straight into the event's buffer: a snapshot of 1,000 runners is
/// encoded once a second for every watched run, so no encoder per runner and no intermediate copies.
enum RunLiveJSON {
    static func write(_ snapshot: RunService.LiveSnapshot, into buffer: inout ByteBuffer) {
        buffer.writeString(#"{"runId":"\#(snapshot.run.id.uuidString.lowercased())","state":"\#(snapshot.state.rawValue)","#)
        buffer.writeString(#""at":"\#(Timestamp.rfc3339(snapshot.newest))","runners":["#)
        for (index, runner) in snapshot.runners.enumerated() {
            buffer.writeString(index == 0 ? #"{"bib":"# : #",{"bib":"#)
            buffer.writeString(String(runner.bib))
            buffer.writeString(#","name":"#)
            writeString(runner.name, into: &buffer)
            buffer.writeString(#","latitude":\#(runner.point.latitude),"longitude":\#(runner.point.longitude),"#)
            buffer.writeString(#""at":"\#(Timestamp.rfc3339(runner.at))","finished":\#(runner.finished)}"#)
        }
        buffer.writeString("]}")
    }

    /// `text` as a JSON string: quotes, backslashes and control characters escaped (RFC 8259 §7), every
    /// other character as its UTF-8.
    static func writeString(_ text: String, into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                buffer.writeInteger(UInt8(ascii: "\\"))
                buffer.writeInteger(byte)
            case 0..<0x20:
                buffer.writeString("\\u00")
                buffer.writeInteger(hex[Int(byte >> 4)])
                buffer.writeInteger(hex[Int(byte & 0x0f)])
            default:
                buffer.writeInteger(byte)
            }
        }
        buffer.writeInteger(UInt8(ascii: "\""))
    }

    private static let hex = Array("0123456789abcdef".utf8)
}
