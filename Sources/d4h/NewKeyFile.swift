import CommandLineSupport
import Foundation

/// Writes a new signing key file (`d4h audit keygen`, `d4h consent keygen`), readable by its owner only.
/// Never over an existing file: a key overwritten is every signature it made left unverifiable.
func writeNewKeyFile(_ path: String, _ text: String) {
    guard !FileManager.default.fileExists(atPath: path) else { fail("\(path) exists; refusing to overwrite a signing key") }
    guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
        fail("cannot write \(path)")
    }
}
