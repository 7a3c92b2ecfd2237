/// A value the database holds that the contract has no name for: written by this server, so a bug on our
/// side, never the caller's. Not `ProblemConvertible` on purpose: `ProblemMiddleware` logs it at error level
/// and answers the bare 500, instead of a fallback that would hide the mismatch.
struct StoredValueMismatch: Error, CustomStringConvertible {
    /// Where the value was read (table and column), for the log line.
    var column: String
    var value: String

    var description: String { "\(column) holds \"\(value)\", which the API contract does not name" }
}
