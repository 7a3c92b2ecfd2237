import CArgon2
import Foundation
import NIOPosix

/// libargon2 refused to hash (out of memory, bad parameters).
package struct PasswordHashingError: Error, CustomStringConvertible {
    package let message: String
    package var description: String { "argon2id: \(message)" }
}
