import Foundation

/// JSON or CSV: how released samples are written out (the API negotiates it: `DownloadFormat+Negotiation`).
package enum DownloadFormat: Sendable {
    case json, csv
}
