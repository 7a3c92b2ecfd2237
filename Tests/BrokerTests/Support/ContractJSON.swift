import BrokerOpenAPI
import Foundation

/// Happy-path request bodies are built from the contract's generated types (`Components.Schemas…`) and
/// encoded as a client would: a field renamed or made required in `openapi.yaml` breaks the fixtures when
/// they compile, not in a test's 422. Bodies meant to be wrong stay hand-written JSON.
extension Encodable {
    var contractJSON: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // The generated types hold strings, numbers and enums only: encoding them cannot fail.
        return String(decoding: try! encoder.encode(self), as: UTF8.self)
    }
}
