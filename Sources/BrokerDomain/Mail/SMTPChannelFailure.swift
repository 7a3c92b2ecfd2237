/// Why `SMTPChannelHandler` stopped answering exchanges; `SMTPMailer` turns it into a `MailDeliveryError`.
enum SMTPChannelFailure: Error {
    /// The deadline of the whole send passed.
    case timedOut
    /// The server closed the connection.
    case closed
    /// The server sent something that is not an SMTP reply, or a reply nobody asked for.
    case protocolViolation(String)
}
