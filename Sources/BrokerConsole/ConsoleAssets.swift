import BrokerDomain
import BrokerHTTP
import Foundation
import Hummingbird
import NIOCore

/// The console's stylesheet and script, read from the bundle once at start and served from memory.
struct ConsoleAssets: Sendable {
    private let files: [String: (contentType: String, bytes: ByteBuffer)]

    init(directory: URL) throws {
        var files: [String: (String, ByteBuffer)] = [:]
        for (name, type) in [("console.css", "text/css; charset=utf-8"), ("console.js", "text/javascript; charset=utf-8")] {
            files[name] = (type, ByteBuffer(bytes: try Data(contentsOf: directory.appendingPathComponent(name))))
        }
        self.files = files
    }

    func register(on router: Router<BrokerRequestContext>) {
        for (name, file) in files {
            let respond: @Sendable (Request, BrokerRequestContext) -> Response = { _, _ in
                Response(
                    status: .ok,
                    headers: [.contentType: file.contentType, .cacheControl: "public, max-age=3600"],
                    body: .init(byteBuffer: file.bytes))
            }
            router.get(RouterPath("/" + name), use: respond)
            // The same answer: NIO sends a HEAD's headers only.
            router.head(RouterPath("/" + name), use: respond)
        }
    }
}
