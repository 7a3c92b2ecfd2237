import BrokerDomain
import BrokerHTTP
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Mustache
import NIOCore
import OpenAPIRuntime

struct ConsoleResourcesMissing: Error, CustomStringConvertible {
    var description: String { "the console's templates or assets are missing from the bundle" }
}
