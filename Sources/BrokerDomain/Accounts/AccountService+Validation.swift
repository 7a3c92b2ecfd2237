import Foundation
import Logging
import PostgresNIO

/// Field checks shared by registration, activation and profile updates; each appends a field error.
extension AccountService {
    func validEmail(_ raw: String, into errors: inout [FieldError]) -> String? {
        switch EmailAddress.parse(raw) {
        case .success(let email): return email.value
        case .failure(let error):
            errors.append(FieldError(field: "email", message: error.message))
            return nil
        }
    }

    func validatePassword(_ password: String, email: String, field: String, into errors: inout [FieldError]) {
        if let violation = PasswordPolicy.violation(password: password, email: email) {
            errors.append(FieldError(field: field, message: violation.message))
        }
    }

    /// `singleLine`: the text is shown on a line of its own (an API key's name in the owner's mail), so a line
    /// break (or a Unicode line or paragraph separator) could add lines that pass for the mail's own.
    func validText(
        _ raw: String, field: String, maxLength: Int, allowEmpty: Bool = false, singleLine: Bool = false, into errors: inout [FieldError]
    ) -> String? {
        let text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.isEmpty && !allowEmpty {
            errors.append(FieldError(field: field, message: "must not be empty"))
            return nil
        }
        if text.count > maxLength {
            errors.append(FieldError(field: field, message: "must be at most \(maxLength) characters"))
            return nil
        }
        if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\n" }) {
            errors.append(FieldError(field: field, message: "must not contain control characters"))
            return nil
        }
        let lineBreaks: Set<Unicode.GeneralCategory> = [.control, .lineSeparator, .paragraphSeparator]
        if singleLine, text.unicodeScalars.contains(where: { lineBreaks.contains($0.properties.generalCategory) }) {
            errors.append(FieldError(field: field, message: "must be one line, without line breaks"))
            return nil
        }
        return text
    }
}
