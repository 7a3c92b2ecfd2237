import BrokerDomain
import BrokerHTTP
import Foundation

/// A server-rendered SVG chart of one data type over the person's local days. A type read at moments (heart
/// rate …) draws the daily mean as a line over the band between the day's lowest and highest reading; a
/// cumulative type (steps, sleep …) draws each day's total as a bar, as a phone's health app does. The median
/// of the peers' month figures is a dashed step line, month by month, where enough peers contribute and the
/// median is accurate enough to show (`Statistics.PeerBucket`); a sentence under the chart says what it is
/// and how sure. Only numbers and fixed words go into the SVG; it is built here, not from user text.
struct HealthChart {
    let statistics: Statistics

    static let width = 640.0, height = 240.0
    static let left = 52.0, right = 12.0, top = 12.0, bottom = 28.0

    /// The page's language: its days and decimal separator in the table, the axes and the description.
    private var strings: ConsoleStrings { ConsoleStrings.current }

    private var isTotal: Bool { statistics.type.aggregation == .dailyTotal }

    var values: [String: Any] {
        let type = statistics.type
        return [
            "type": type.rawValue,
            "title": Wording.typeWithUnit(type),
            "isTotal": isTotal,
            "svg": svg,
            "peerGroup": Wording.peerGroup(statistics.group),
            "peersAvailable": !medians.isEmpty,
            "peerExplanation": peerExplanation,
            "rows": statistics.own.map { bucket -> [String: String] in
                let median = medians.first { $0.start == bucket.start }?.p50
                return [
                    "day": strings.day(bucket.start), "mean": strings.decimal(bucket.mean), "min": strings.decimal(bucket.min),
                    "max": strings.decimal(bucket.max), "count": strings.number(bucket.count),
                    "peerMedian": median.map { strings.decimal($0) } ?? "–",
                ]
            },
        ]
    }

    /// The peer buckets with a median to show (one accurate enough: `Statistics.PeerBucket.p50`).
    private var medians: [Statistics.PeerBucket] {
        statistics.peersAvailable ? statistics.peerBuckets.filter { $0.p50 != nil } : []
    }

    /// What the dashed line is and how sure, in plain words, with the newest shown median's margin; "" when
    /// there is no line.
    private var peerExplanation: String {
        guard let newest = medians.last, let margin = newest.p50Margin95 else { return "" }
        return strings.format(
            "data.peers.explanation",
            ["group": Wording.peerGroup(statistics.group), "margin": strings.decimal(margin), "unit": Wording.unit(statistics.type)])
    }

    var svg: String {
        let own = statistics.own
        guard let firstDay = own.first?.start.dayNumber, let lastDay = own.last?.start.dayNumber else { return "" }
        // Peers' days within the person's own first and last: shared cells exist for every closed day, also
        // where the person has no data, and a point beyond the axes would be drawn outside the plot.
        let peers = medians.filter { (firstDay...lastDay).contains($0.start.dayNumber) }
        let values = (isTotal ? own.map(\.mean) + [0] : own.flatMap { [$0.min, $0.max] }) + peers.compactMap(\.p50)
        var low = values.min() ?? 0
        var high = values.max() ?? 1
        // A flat series still needs a range; totals keep their zero baseline (all-zero days draw on 0–1).
        if high - low < 1e-9 {
            if !isTotal { low -= 1 }
            high += 1
        }
        let padding = (high - low) * 0.08
        // Bars stand on zero: a total's axis starts there.
        if !isTotal { low -= padding }
        high += padding
        let span = Double(max(lastDay - firstDay, 1))
        let plotHeight = Self.height - Self.top - Self.bottom
        // Bars are centred on their day: inset the days by half a bar so the first and last stay inside the axes.
        let inset = isTotal ? Self.barWidth(plotWidth: Self.width - Self.left - Self.right, span: span) / 2 + 1 : 0
        let plotLeft = Self.left + inset
        let plotWidth = Self.width - Self.left - Self.right - 2 * inset
        func x(_ day: Int) -> Double { own.count == 1 ? plotLeft + plotWidth / 2 : plotLeft + Double(day - firstDay) / span * plotWidth }
        func y(_ value: Double) -> Double { Self.top + (high - value) / (high - low) * plotHeight }
        func point(_ day: Int, _ value: Double) -> String { "\(Self.coordinate(x(day))),\(Self.coordinate(y(value)))" }

        let band = (own.map { point($0.start.dayNumber, $0.max) } + own.reversed().map { point($0.start.dayNumber, $0.min) })
            .joined(separator: " ")
        let meanLine = own.map { point($0.start.dayNumber, $0.mean) }.joined(separator: " ")
        // A step line: each month's figure holds until the next month's bucket, where it steps; a month
        // missing between two shown ones breaks the line (a polyline per run of consecutive months).
        var peerRuns: [[String]] = []
        var previous: Statistics.PeerBucket?
        for peer in peers {
            guard let median = peer.p50 else { continue }
            if let last = previous, let lastMedian = last.p50,
                last.month == peer.month || Statistics.Bucket.month.next(after: last.month) == peer.month
            {
                if last.month != peer.month { peerRuns[peerRuns.count - 1].append(point(peer.start.dayNumber, lastMedian)) }
                peerRuns[peerRuns.count - 1].append(point(peer.start.dayNumber, median))
            } else {
                peerRuns.append([point(peer.start.dayNumber, median)])
            }
            previous = peer
        }
        let peerLines = peerRuns.map { #"<polyline class="peer" points="\#($0.joined(separator: " "))"/>"# }.joined()
        let lowest = isTotal ? low : low + padding
        let description = strings.format(
            isTotal ? "chart.description.total" : "chart.description.mean",
            [
                "type": Wording.typeName(statistics.type).lowercased(), "from": strings.day(own.first!.start), "to": strings.day(own.last!.start),
                "low": strings.decimal(lowest), "high": strings.decimal(high - padding), "unit": Wording.unit(statistics.type),
            ])

        var svg =
            #"<svg class="chart-svg" viewBox="0 0 \#(Int(Self.width)) \#(Int(Self.height))" role="img" aria-label="\#(description)" xmlns="http://www.w3.org/2000/svg">"#
        // Axes and labels: the value range on the left, the first and last day below.
        svg += #"<line class="axis" x1="\#(Self.left)" y1="\#(Self.top)" x2="\#(Self.left)" y2="\#(Self.height - Self.bottom)"/>"#
        svg +=
            #"<line class="axis" x1="\#(Self.left)" y1="\#(Self.height - Self.bottom)" x2="\#(Self.width - Self.right)" y2="\#(Self.height - Self.bottom)"/>"#
        for value in [high - padding, (high - padding + lowest) / 2, lowest] {
            svg +=
                #"<text class="label" x="\#(Self.left - 6)" y="\#(Self.coordinate(y(value) + 4))" text-anchor="end">\#(strings.decimal(value))</text>"#
            svg +=
                #"<line class="grid" x1="\#(Self.left)" y1="\#(Self.coordinate(y(value)))" x2="\#(Self.width - Self.right)" y2="\#(Self.coordinate(y(value)))"/>"#
        }
        svg += #"<text class="label" x="\#(Self.left)" y="\#(Self.height - 8)">\#(strings.day(own.first!.start))</text>"#
        svg +=
            #"<text class="label" x="\#(Self.width - Self.right)" y="\#(Self.height - 8)" text-anchor="end">\#(strings.day(own.last!.start))</text>"#
        if isTotal {
            // One bar per day with data, centred on its day; at most 30 days, so a bar is several pixels wide.
            let barWidth = Self.barWidth(plotWidth: Self.width - Self.left - Self.right, span: span)
            for bucket in own {
                let top = y(bucket.mean)
                let bottom = y(0)
                svg +=
                    #"<rect class="bar" x="\#(Self.coordinate(x(bucket.start.dayNumber) - barWidth / 2))" y="\#(Self.coordinate(top))""#
                    + #" width="\#(Self.coordinate(barWidth))" height="\#(Self.coordinate(max(0, bottom - top)))"><title>\#(strings.day(bucket.start)): \#(strings.decimal(bucket.mean))</title></rect>"#
            }
            svg += peerLines
            return svg + "</svg>"
        }
        svg += #"<polygon class="band" points="\#(band)"/>"#
        svg += peerLines
        svg += #"<polyline class="mean" points="\#(meanLine)"/>"#
        for bucket in own {
            svg += #"<circle class="dot" cx="\#(Self.coordinate(x(bucket.start.dayNumber)))" cy="\#(Self.coordinate(y(bucket.mean)))" r="2.5"/>"#
        }
        return svg + "</svg>"
    }

    /// Seven tenths of a day's share of the plot, between 2 and 24 px.
    static func barWidth(plotWidth: Double, span: Double) -> Double { max(2, min(24, plotWidth / (span + 1) * 0.7)) }

    static func coordinate(_ value: Double) -> String { String(format: "%.1f", value) }

    /// Up to one decimal, without a trailing ".0".
    /// Formatted, never converted to an integer type: a filter bound of 1e19 must print, not trap.
    static func number(_ value: Double) -> String {
        let text = String(format: "%.1f", value)
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }
}
