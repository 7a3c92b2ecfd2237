import BrokerDomain
import Configuration
import Foundation
import NIOSSL

extension SMTPSettings {
    /// Reads `SMTP_*`: nil unless MAIL_TRANSPORT=smtp. The password comes from a file (`SMTP_PASSWORD_FILE`),
    /// never from the environment or a flag, where `ps` and crash reports show it; the file and the CA are read now.
    static func read(from reader: ConfigReader, transport: MailTransportKind) throws -> SMTPSettings? {
        // Looked at whatever the transport, so that `d4h serve` knows their flags (it refuses flags no setting reads).
        for key in ["host", "port", "tls", "username", "password.file", "ca.file", "timeout"] {
            _ = reader.string(forKey: ConfigKey(["smtp"] + key.split(separator: ".").map(String.init)))
        }
        guard transport == .smtp else { return nil }
        guard let host = reader.string(forKey: "smtp.host"), !host.isEmpty else {
            throw ConfigurationError.invalid("SMTP_HOST", "is required when MAIL_TRANSPORT=smtp")
        }
        let securityName = reader.string(forKey: "smtp.tls", default: Security.starttls.rawValue)
        guard let security = Security(rawValue: securityName.lowercased()) else {
            throw ConfigurationError.invalid("SMTP_TLS", "must be starttls, implicit or none, not \"\(securityName)\"")
        }
        let port = try reader.wholeNumber("SMTP_PORT", in: 1...65_535)
        let username = reader.string(forKey: "smtp.username").flatMap { $0.isEmpty ? nil : $0 }
        let passwordFile = reader.string(forKey: "smtp.password.file").flatMap { $0.isEmpty ? nil : $0 }
        if security == .none {
            // Plain SMTP is for a sink on this machine (tests, benchmarks): elsewhere anyone on the path reads
            // every activation link, and a password would go with them.
            guard Self.isLoopback(host) else {
                throw ConfigurationError.invalid("SMTP_TLS", "none is only for a server on the loopback interface, not \(host)")
            }
            guard username == nil, passwordFile == nil else {
                throw ConfigurationError.invalid("SMTP_USERNAME", "cannot be used with SMTP_TLS=none: the password would be sent in clear")
            }
        }
        var credentials: Credentials?
        switch (username, passwordFile) {
        case (nil, nil): credentials = nil
        case (let username?, let file?): credentials = Credentials(username: username, password: try Self.password(file: file))
        case (_?, nil): throw ConfigurationError.invalid("SMTP_PASSWORD_FILE", "is required with SMTP_USERNAME")
        case (nil, _?): throw ConfigurationError.invalid("SMTP_USERNAME", "is required with SMTP_PASSWORD_FILE")
        }
        if let username, username.contains("\0") { throw ConfigurationError.invalid("SMTP_USERNAME", "must not contain NUL") }
        var roots: [NIOSSLCertificate]?
        if let file = reader.string(forKey: "smtp.ca.file"), !file.isEmpty {
            do {
                roots = try NIOSSLCertificate.fromPEMFile(file)
            } catch {
                throw ConfigurationError.invalid("SMTP_CA_FILE", "cannot be read as PEM certificates: \(file) (\(error))")
            }
            guard roots?.isEmpty == false else { throw ConfigurationError.invalid("SMTP_CA_FILE", "holds no PEM certificate: \(file)") }
        }
        let timeout = try reader.wholeNumber("SMTP_TIMEOUT", in: 1...600) ?? 30
        return SMTPSettings(host: host, port: port, security: security, credentials: credentials, trustRoots: roots, timeout: .seconds(timeout))
    }

    /// The file's text without its final line break (an editor's `echo pass > file` adds one).
    private static func password(file: String) throws -> String {
        let text: String
        do {
            text = try String(contentsOfFile: file, encoding: .utf8)
        } catch {
            throw ConfigurationError.invalid("SMTP_PASSWORD_FILE", "cannot be read: \(file) (\(error.localizedDescription))")
        }
        var password = Substring(text)
        while password.last == "\n" || password.last == "\r" || password.last == "\r\n" { password.removeLast() }
        guard !password.isEmpty, !password.contains("\0") else {
            throw ConfigurationError.invalid("SMTP_PASSWORD_FILE", "holds no password (or one with a NUL): \(file)")
        }
        return String(password)
    }

    /// 127.0.0.0/8, ::1 or `localhost`.
    static func isLoopback(_ host: String) -> Bool {
        if host.lowercased() == "localhost" || host == "::1" || host == "[::1]" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets.allSatisfy { UInt8($0) != nil } && octets[0] == "127"
    }
}
