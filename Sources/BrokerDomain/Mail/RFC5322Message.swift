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
        let subject =
            mail.subject.allSatisfy(\.isASCII)
            ? mail.subject
            : "=?UTF-8?B?\(Data(mail.subject.utf8).base64EncodedString())?="
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
