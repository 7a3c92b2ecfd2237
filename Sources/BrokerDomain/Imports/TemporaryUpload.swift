import Foundation

/// An upload spooled to a private temporary file, chunk by chunk (never whole in memory: the API writes it,
/// `TemporaryUpload+HTTPBody`). Whoever holds it
/// removes it; a background import takes it over and removes it when the import ends.
package struct TemporaryUpload: Sendable {
    package let url: URL
    /// Bytes written.
    package let size: Int64

    package init(url: URL, size: Int64) {
        self.url = url
        self.size = size
    }

    package func remove() { try? FileManager.default.removeItem(at: url) }
}
