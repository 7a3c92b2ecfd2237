import BrokerDomain
import BrokerHTTP
import Foundation

/// Reading typed values out of form fields, each failure a field error the form shows next to its field.
enum FormValues {
    /// A date input's day as the API's RFC 3339 time at 00:00 UTC (`plusDays` 1: the end of that day).
    static func startOfDay(_ text: String?, plusDays: Int = 0, field: String, into errors: inout [FieldError]) -> String? {
        guard let text else { return nil }
        guard let day = CalendarDate(iso: text) else {
            errors.append(FieldError(field: field, message: "must be a date (YYYY-MM-DD)"))
            return nil
        }
        return day.adding(days: plusDays).description + "T00:00:00Z"
    }

    static func integer(_ text: String?, field: String, into errors: inout [FieldError]) -> Int? {
        guard let text else { return nil }
        guard let value = Int(text) else {
            errors.append(FieldError(field: field, message: "must be a whole number"))
            return nil
        }
        return value
    }

    static func decimal(_ text: String?, field: String, into errors: inout [FieldError]) -> Double? {
        guard let text else { return nil }
        guard let value = Double(text.replacingOccurrences(of: ",", with: ".")), value.isFinite else {
            errors.append(FieldError(field: field, message: "must be a number"))
            return nil
        }
        return value
    }
}
