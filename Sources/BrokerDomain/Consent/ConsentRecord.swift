/// What the FHIR `Consent` of a request is made of: the request as the caller is shown it, the person's
/// pseudonym for the company (nil when the caller may not learn that a person is there), and its receipts.
package struct ConsentRecord: Sendable {
    package var request: SingleRequest
    package var subject: String?
    package var receipts: [ConsentReceipt]
    /// The server that issued the receipts (`PUBLIC_URL`), which the resource names as the organization.
    package var issuer: String
}
