import Crypto

/// A fresh random HMAC key.
enum SymmetricKeyForTests {
    static func make() -> SymmetricKey { SymmetricKey(size: .bits256) }
}
