import Foundation

/// What proves the second factor: a current TOTP code, or one of the recovery codes.
package enum SecondFactorCode: Sendable, Equatable {
    case totp(String)
    case recovery(String)

    /// From the two optional fields of a form or a request body (`codeField`, `recoveryField`): exactly one.
    package static func from(code: String?, recoveryCode: String?, codeField: String = "code", recoveryField: String = "recoveryCode") throws
        -> SecondFactorCode
    {
        let code = code?.trimmingCharacters(in: .whitespaces).nilIfEmpty
        let recovery = recoveryCode?.trimmingCharacters(in: .whitespaces).nilIfEmpty
        switch (code, recovery) {
        case (let code?, nil): return .totp(code)
        case (nil, let recovery?): return .recovery(recovery)
        case (nil, nil):
            throw SecondFactorError.invalid([FieldError(field: codeField, message: "is required (or \(recoveryField))")])
        case (.some, .some):
            throw SecondFactorError.invalid([FieldError(field: recoveryField, message: "goes instead of \(codeField), not with it")])
        }
    }
}

extension String {
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}
