import CQRencode
import Foundation

/// A QR code drawn by the server as SVG, so the enrolment page sends the TOTP key to no outside service.
/// Encoded by the system libqrencode (Debian's `libqrencode-dev`), as passwords are hashed by the system
/// libargon2.
package enum QRCode {
    /// Modules of white around the symbol: the quiet zone ISO/IEC 18004 asks for, without which scanners
    /// may not find it.
    static let quietZone = 4
    /// Pixels per module at the SVG's natural size.
    static let moduleSize = 6

    /// `text` as an SVG document: black squares on white, error correction level M.
    package static func svg(_ text: String) throws -> String {
        guard let symbol = QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1) else { throw QRCodeError() }
        defer { QRcode_free(symbol) }
        let width = Int(symbol.pointee.width)
        let side = width + 2 * quietZone
        var path = ""
        path.reserveCapacity(width * width * 4)
        for y in 0..<width {
            for x in 0..<width where symbol.pointee.data[y * width + x] & 1 == 1 {
                path += "M\(x + quietZone) \(y + quietZone)h1v1h-1z"
            }
        }
        let pixels = side * moduleSize
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(pixels)" height="\(pixels)" viewBox="0 0 \(side) \(side)" \
            shape-rendering="crispEdges" role="img"><title>QR code</title>\
            <rect width="\(side)" height="\(side)" fill="#fff"/><path fill="#000" d="\(path)"/></svg>
            """
    }
}

/// libqrencode could not encode the text (too long for any QR version, or out of memory).
package struct QRCodeError: Error, Sendable {}
