import BrokerDomain
import BrokerOpenAPI

// Language between the contract and the domain, exhaustively: a language added to either side does not
// compile until it is mapped.

extension Components.Schemas.Language {
    init(_ language: Language) {
        switch language {
        case .en: self = .en
        case .it: self = .it
        }
    }
}

extension Language {
    init(_ language: Components.Schemas.Language) {
        switch language {
        case .en: self = .en
        case .it: self = .it
        }
    }
}
