/// A started enrolment: the new key as an authenticator app takes it (typed in, or scanned from the QR code
/// of the `otpauth://` URI). It signs nothing in until a first code confirms it.
package struct SecondFactorEnrolment: Sendable {
    /// Base32, as typed into an app.
    package var secret: String
    package var uri: String
    /// The URI as a QR code, an SVG document drawn by the server.
    package var qrCodeSVG: String
}
