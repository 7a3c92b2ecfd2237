import ArgumentParser
import AsyncHTTPClient
import BrokerDomain
import BrokerServer
import BrokerTestSupport
import BrokerTooling
import CommandLineSupport
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

enum LoadBodies {
    /// `count` heart-rate readings `step` seconds apart from `start`, as the JSON upload body.
    static func heartRates(count: Int, start: Date, step: Double) -> ByteBuffer {
        var text = "{\"samples\":["
        text.reserveCapacity(count * 64)
        for index in 0..<count {
            if index > 0 { text += "," }
            let at = Timestamp.rfc3339(start.addingTimeInterval(Double(index) * step))
            text += "{\"type\":\"heart_rate\",\"value\":\(60 + index % 60),\"at\":\"\(at)\"}"
        }
        text += "]}"
        return ByteBuffer(string: text)
    }
}
