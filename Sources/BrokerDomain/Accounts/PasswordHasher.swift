import CArgon2
import Foundation
import NIOPosix

/// Argon2id password hashing through the system libargon2, with the OWASP parameters.
package struct PasswordHasher: Sendable {
    /// OWASP Password Storage Cheat Sheet: m = 19 MiB, t = 2, p = 1.
    package struct Parameters: Sendable, Equatable {
        package var memoryKiB: UInt32 = 19 * 1024
        package var iterations: UInt32 = 2
        package var parallelism: UInt32 = 1
        package var saltLength = 16
        package var hashLength = 32
        package init() {}
    }

    package let parameters: Parameters
    private let threadPool: NIOThreadPool

    package init(parameters: Parameters = Parameters(), threadPool: NIOThreadPool = .singleton) {
        self.parameters = parameters
        self.threadPool = threadPool
    }

    /// The encoded string (`$argon2id$v=19$m=19456,t=2,p=1$salt$hash`), computed off the event loops.
    package func hash(_ password: String) async throws -> String {
        let parameters = self.parameters
        return try await threadPool.runIfActive { try Self.hashNow(password, parameters: parameters) }
    }

    /// True when `password` matches `encoded`; false for a mismatch or an unreadable hash.
    package func verify(_ password: String, against encoded: String) async throws -> Bool {
        try await threadPool.runIfActive {
            let bytes = Array(password.utf8)
            return argon2id_verify(encoded, bytes, bytes.count) == ARGON2_OK.rawValue
        }
    }

    static func hashNow(_ password: String, parameters: Parameters) throws -> String {
        var salt = [UInt8](repeating: 0, count: parameters.saltLength)
        var generator = SystemRandomNumberGenerator()
        for index in salt.indices { salt[index] = generator.next() }
        let bytes = Array(password.utf8)
        let encodedLength = argon2_encodedlen(
            parameters.iterations, parameters.memoryKiB, parameters.parallelism,
            UInt32(salt.count), UInt32(parameters.hashLength), Argon2_id)
        var encoded = [CChar](repeating: 0, count: encodedLength)
        let status = argon2id_hash_encoded(
            parameters.iterations, parameters.memoryKiB, parameters.parallelism,
            bytes, bytes.count, salt, salt.count, parameters.hashLength, &encoded, encodedLength)
        guard status == ARGON2_OK.rawValue else {
            throw PasswordHashingError(message: String(cString: argon2_error_message(status)))
        }
        return String(decoding: encoded.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
