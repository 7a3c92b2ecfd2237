import Foundation

/// Writes released positions as the download's JSON document, CSV or GPX 1.1, chunk by chunk. Positions
/// come a few thousand per run, not millions, so this favours plainness over the samples' byte tricks.
struct ReleasedPositionEncoder: ReleaseEncoder {
    let format: PositionFormat
    private var bytes: [UInt8] = []
    private var first = true

    init(format: PositionFormat) {
        self.format = format
        switch format {
        case .json: bytes += Array(#"{"items":["#.utf8)
        case .csv: bytes += Array("at,latitude,longitude,elevation,accuracy\r\n".utf8)
        case .gpx:
            bytes += Array(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <gpx version="1.1" creator="Data4Help" xmlns="http://www.topografix.com/GPX/1/1">
                <trk><trkseg>

                """.utf8)
        }
    }

    var isChunkFull: Bool { bytes.count >= ReleasedSampleEncoder.chunkSize }

    mutating func takeChunk() -> [UInt8] {
        defer { bytes = [] }
        return bytes
    }

    mutating func append(_ chunk: ReleasedPositions, row: Int) -> Int {
        let position = chunk.positions[row]
        let at = Timestamp.rfc3339(position.at)
        let latitude = ReleasedSampleEncoder.number(position.latitude)
        let longitude = ReleasedSampleEncoder.number(position.longitude)
        let elevation = position.elevation.map(ReleasedSampleEncoder.number)
        let accuracy = position.accuracy.map(ReleasedSampleEncoder.number)
        switch format {
        case .json:
            var text = #"{"at":"\#(at)","latitude":\#(latitude),"longitude":\#(longitude)"#
            if let elevation { text += #","elevation":\#(elevation)"# }
            if let accuracy { text += #","accuracy":\#(accuracy)"# }
            bytes += Array(((first ? "" : ",") + text + "}").utf8)
        case .csv:
            bytes += Array("\(at),\(latitude),\(longitude),\(elevation ?? ""),\(accuracy ?? "")\r\n".utf8)
        case .gpx:
            var text = #"<trkpt lat="\#(latitude)" lon="\#(longitude)">"#
            if let elevation { text += "<ele>\(elevation)</ele>" }
            text += "<time>\(at)</time>"
            if let accuracy { text += "<extensions><hAcc>\(accuracy)</hAcc></extensions>" }
            bytes += Array((text + "</trkpt>\n").utf8)
        }
        first = false
        return 1
    }

    mutating func finish(availableTypes _: [SampleType], nextCursor: String) {
        switch format {
        case .json: bytes += Array(#"],"nextCursor":"\#(nextCursor)"}"#.utf8)
        case .csv: break
        case .gpx: bytes += Array("</trkseg></trk>\n</gpx>\n".utf8)
        }
    }
}
