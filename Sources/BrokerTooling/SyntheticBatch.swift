import BrokerDomain
import BrokerTestSupport
import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// The COPY text of one batch of synthetic people, ready to store.
struct SyntheticBatch: Sendable {
    var people: Int
    var first = 0
    var sampleCount = 0
    var rollupCount = 0
    var accounts: [ByteBuffer] = []
    var users: [ByteBuffer] = []
    var samples: [ByteBuffer] = []
    var rollups: [ByteBuffer] = []
    var arrivals: [ByteBuffer] = []
}
