import BrokerDomain
import Configuration
import Foundation

extension BrokerConfiguration {
    /// `MAIL_FROM`, and the settings of the transport `MAIL_TRANSPORT` names: `MAIL_PROGRAM*` for
    /// `sendmail`, `SMTP_*` for `smtp`. Checked now, so a mistake stops the start with the variable's name
    /// rather than failing every mail later.
    mutating func readMailSettings(_ reader: ConfigReader) throws {
        if let from = reader.string(forKey: "mail.from"), !from.isEmpty {
            // It becomes `MAIL FROM:<…>` and the From header: nothing in it may end either early.
            let parts = from.split(separator: "@", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty,
                !from.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F || "<>\"(),;:[]\\".unicodeScalars.contains($0) })
            else { throw ConfigurationError.invalid("MAIL_FROM", "must be a plain address (name@domain), not \"\(from)\"") }
            mailFrom = from
        }
        if let program = reader.string(forKey: "mail.program"), !program.isEmpty { mailProgram = program }
        if let seconds = try reader.wholeNumber("MAIL_PROGRAM_TIMEOUT", in: 1...600) { mailProgramTimeout = .seconds(seconds) }
        if mailTransport == .sendmail, !FileManager.default.isExecutableFile(atPath: mailProgram) {
            throw ConfigurationError.invalid("MAIL_PROGRAM", "is not an executable file: \(mailProgram) (MAIL_TRANSPORT=sendmail pipes mails to it)")
        }
        smtp = try SMTPSettings.read(from: reader, transport: mailTransport)
    }
}
