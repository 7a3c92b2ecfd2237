/// A rendered message as the bytes that follow `DATA` (RFC 5321 §4.5.2): every line ended by CRLF, a line
/// that starts with "." given a second one, and the lone "." line that ends it.
enum SMTPMessageData {
    /// A bare CR or LF in the message becomes CRLF too. Servers disagree about what a bare LF ends: one that
    /// takes `LF . LF` (or `LF . CRLF`) for the end of the data would read whatever follows as further
    /// commands and mail (SMTP smuggling), so none is ever sent.
    static func encode(_ message: String) -> [UInt8] {
        let cr = UInt8(ascii: "\r")
        let lf = UInt8(ascii: "\n")
        let dot = UInt8(ascii: ".")
        var bytes: [UInt8] = []
        bytes.reserveCapacity(message.utf8.count + message.utf8.count / 32 + 8)
        var atLineStart = true
        var previousWasCR = false
        for byte in message.utf8 {
            if byte == lf && previousWasCR {
                previousWasCR = false
                continue  // the LF of a CRLF already written
            }
            previousWasCR = byte == cr
            if byte == cr || byte == lf {
                bytes.append(contentsOf: [cr, lf])
                atLineStart = true
                continue
            }
            if atLineStart && byte == dot { bytes.append(dot) }
            atLineStart = false
            bytes.append(byte)
        }
        if !atLineStart { bytes.append(contentsOf: [cr, lf]) }
        bytes.append(contentsOf: [dot, cr, lf])
        return bytes
    }
}
