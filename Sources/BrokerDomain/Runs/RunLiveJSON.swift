import Foundation
import Logging

/// The live feed's JSON, as `GET /v1/runs/{id}/live` and the event stream both send it (the contract's `RunLive`).
enum RunLiveJSON {
    static func encode(_ snapshot: RunService.LiveSnapshot) -> [UInt8] {
        var text = #"{"runId":"\#(snapshot.run.id.uuidString.lowercased())","state":"\#(snapshot.state.rawValue)","#
        text += #""at":"\#(Timestamp.rfc3339(snapshot.newest))","runners":["#
        text += snapshot.runners.map { runner in
            let name = String(decoding: (try? JSONEncoder().encode(runner.name)) ?? Data("\"\"".utf8), as: UTF8.self)
            return #"{"bib":\#(runner.bib),"name":\#(name),"latitude":\#(runner.point.latitude),"longitude":\#(runner.point.longitude),"#
                + #""at":"\#(Timestamp.rfc3339(runner.at))","finished":\#(runner.finished)}"#
        }.joined(separator: ",")
        text += "]}"
        return Array(text.utf8)
    }
}
