import BrokerDomain
import BrokerHTTP
import HTTPTypes
import Hummingbird
import NIOCore
import OpenAPIRuntime

extension Response {
    /// A response the API's handlers produced, body streamed as it is produced.
    init(openAPI head: HTTPResponse, body: HTTPBody?) {
        self.init(
            status: head.status, headers: head.headerFields,
            body: body.map { body in ResponseBody(asyncSequence: body.map { ByteBuffer(bytes: $0) }) } ?? .init())
    }
}
