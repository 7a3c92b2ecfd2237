import Foundation

// This target holds the contract, `openapi.yaml`, and what swift-openapi-generator makes of it (the
// `Components`, `Operations` and `APIProtocol` types, at `package` access): generated code lives apart
// from the code written by hand, and rebuilding it does not recompile the server's own files' module.

/// The OpenAPI document the server was generated from, as `GET /openapi.yaml` serves it.
package enum OpenAPIDocument {
    package static let text: String = {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml"),
            let text = try? String(contentsOf: url, encoding: .utf8)
        else { return "openapi: 3.1.0\ninfo: {title: Data4Help, version: unknown}\npaths: {}\n" }
        return text
    }()
}
