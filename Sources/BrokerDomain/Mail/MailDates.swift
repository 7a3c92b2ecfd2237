import Foundation

/// Dates and times as a mail writes them: in the recipient's language and, for a person, their time zone
/// (a company's are in UTC, and say so).
enum MailDates {
    static func dateTime(_ date: Date, _ language: Language, _ zone: TimeZone?) -> String {
        let formatter = DateFormatter()
        formatter.locale = language.locale
        formatter.timeZone = zone ?? TimeZone(identifier: "UTC")
        formatter.dateStyle = .long
        formatter.timeStyle = .short
        return formatter.string(from: date) + (zone == nil ? " UTC" : "")
    }

    static func date(_ date: Date, _ language: Language, _ zone: TimeZone?) -> String {
        let formatter = DateFormatter()
        formatter.locale = language.locale
        formatter.timeZone = zone ?? TimeZone(identifier: "UTC")
        formatter.dateStyle = .long
        formatter.timeStyle = .none
        return formatter.string(from: date)
    }

    static func number(_ value: Int, _ language: Language) -> String {
        value.formatted(.number.locale(language.locale))
    }
}
