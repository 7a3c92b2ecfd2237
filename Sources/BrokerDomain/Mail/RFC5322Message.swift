import Foundation

/// Renders a mail as an RFC 5322 message (CRLF line ends, UTF-8 body, encoded-word subject when needed).
enum RFC5322Message {
    /// `date` (the `Date:` header) is when the transport hands the message on, the system's time: a fact of
    /// the transport, not a decision of the domain.
    static func render(_ mail: OutgoingMail, from sender: String, date: Date = Date()) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        // A subject holds text others chose (a company's name): any line break or control character in it is
        // a space, so it can never end the header and start one of its own (a `Bcc:` that `sendmail -t` obeys).
        let oneLine = String(
            String.UnicodeScalarView(
                mail.subject.unicodeScalars.map {
                    [.control, .lineSeparator, .paragraphSeparator].contains($0.properties.generalCategory) ? " " : $0
                }))
        let subject =
            oneLine.allSatisfy(\.isASCII)
            ? oneLine
            : "=?UTF-8?B?\(Data(oneLine.utf8).base64EncodedString())?="
        let domain = sender.split(separator: "@").last.map(String.init) ?? "localhost"
        var headers = [
            "From: Data4Help <\(sender)>",
            "To: <\(mail.to)>",
            "Subject: \(subject)",
            "Date: \(formatter.string(from: date))",
            "Message-ID: <\(mail.messageID.uuidString.lowercased())@\(domain)>",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: 8bit",
        ]
        if let unsubscribe = mail.listUnsubscribe {
            // RFC 8058: a mail client may unsubscribe with one POST of `List-Unsubscribe=One-Click` to the URL.
            headers += ["List-Unsubscribe: <\(unsubscribe)>", "List-Unsubscribe-Post: List-Unsubscribe=One-Click"]
        }
        let body = mail.body.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\r\n")
        return headers.joined(separator: "\r\n") + "\r\n\r\n" + body + "\r\n"
    }
}
