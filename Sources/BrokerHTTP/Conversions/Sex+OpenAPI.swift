import BrokerDomain
import BrokerOpenAPI

// Sex between the contract and the domain, exhaustively, and from the text an account's profile stores.

extension Components.Schemas.Sex {
    init(_ sex: Sex) {
        switch sex {
        case .female: self = .f
        case .male: self = .m
        }
    }

    /// A profile's stored sex. The database allows only F and M, so anything else is our bug: a logged 500,
    /// not a profile that silently leaves it out.
    init(stored text: String) throws {
        guard let sex = Sex(rawValue: text) else { throw StoredValueMismatch(column: "users.sex", value: text) }
        self.init(sex)
    }
}

extension Components.Schemas.Demographics.SexPayload {
    init(_ sex: Sex) {
        switch sex {
        case .female: self = .f
        case .male: self = .m
        }
    }
}

extension Sex {
    init(_ sex: Components.Schemas.Demographics.SexPayload) {
        switch sex {
        case .f: self = .female
        case .m: self = .male
        }
    }
}
