import BrokerConsole
import BrokerDomain
import BrokerHTTP
import Configuration
import Foundation
import NIOSSL

/// The PEM certificate chain and private key `d4h serve` terminates TLS with (`TLS_CERTIFICATE`, `TLS_KEY`),
/// for deployments without a reverse proxy in front. Without them the server speaks plain HTTP.
package struct TLSFiles: Sendable, Equatable {
    package var certificatePath: String
    package var keyPath: String

    package init(certificatePath: String, keyPath: String) {
        (self.certificatePath, self.keyPath) = (certificatePath, keyPath)
    }

    /// Both variables or neither: a certificate without its key (or the reverse) is a mistake, never a
    /// reason to fall back to plain HTTP.
    package static func read(from reader: ConfigReader) throws -> TLSFiles? {
        let certificate = reader.string(forKey: "tls.certificate").flatMap { $0.isEmpty ? nil : $0 }
        let key = reader.string(forKey: "tls.key").flatMap { $0.isEmpty ? nil : $0 }
        switch (certificate, key) {
        case (nil, nil): return nil
        case (let certificate?, let key?): return TLSFiles(certificatePath: certificate, keyPath: key)
        case (_?, nil):
            throw ConfigurationError.invalid(
                "TLS_KEY", "is not set: --tls-certificate (TLS_CERTIFICATE) needs --tls-key (TLS_KEY), the certificate's private key")
        case (nil, _?):
            throw ConfigurationError.invalid(
                "TLS_CERTIFICATE", "is not set: --tls-key (TLS_KEY) needs --tls-certificate (TLS_CERTIFICATE), the PEM certificate chain")
        }
    }

    /// TLS 1.2 or newer (1.0 and 1.1 are deprecated by RFC 8996) with the files' chain and key. Reads and
    /// checks the files now, so a wrong path or a key that does not belong to the certificate stops the
    /// server at start with a message naming the variable, not at the first connection.
    func serverConfiguration() throws -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificatePath)
        } catch {
            throw ConfigurationError.invalid("TLS_CERTIFICATE", "cannot be read as a PEM certificate chain: \(certificatePath) (\(error))")
        }
        guard !chain.isEmpty else {
            throw ConfigurationError.invalid("TLS_CERTIFICATE", "holds no PEM certificate: \(certificatePath)")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        } catch {
            throw ConfigurationError.invalid("TLS_KEY", "cannot be read as an unencrypted PEM private key: \(keyPath) (\(error))")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        do {
            _ = try NIOSSLContext(configuration: configuration)
        } catch {
            throw ConfigurationError.invalid("TLS_KEY", "does not fit TLS_CERTIFICATE (\(error))")
        }
        return configuration
    }
}
