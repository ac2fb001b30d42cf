import Foundation
import RunCore

extension RunExport {
    /// An SVG picture of the run for a browser: the route as the run page draws it (the measured track,
    /// coloured by ``PaceColours``; `tracker`, the server's, measures it as for the page) on an equirectangular
    /// projection (longitudes scaled by the cosine of the mean latitude, so shapes are true near the run), a
    /// marker and label where each badge was reached, and a legend (slow, average, fast). The route is not
    /// drawn across a pause (from `source`) or a re-anchor.
    public static func svg(_ run: StoredRun, fixes: [StoredFix], source: ImportRecord? = nil,
                           tracker: TrackerConfiguration = .init(), width: Double = 800) -> String {
        let (track, breaks) = measuredTrack(of: fixes, pausesBefore: source?.pausesBefore ?? [], configuration: tracker)
        let escape = ExportFormatting.xmlEscaped
        let number = { (value: Double) in ExportFormatting.decimal(value, places: 1) }
        let margin = 40.0, header = 36.0, legendHeight = 44.0
        let projection = Projection(track: track, awards: run.awards.map(\.award.coordinate),
                                    width: width - 2 * margin, maximumHeight: width - 2 * margin)
        let height = header + projection.height + 2 * margin + legendHeight
        let place = { (coordinate: Coordinate) -> (Double, Double) in
            let (x, y) = projection.point(coordinate)
            return (margin + x, header + margin + y)
        }

        var lines: [String] = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(number(width))" height="\#(number(height))" "#
                + #"viewBox="0 0 \#(number(width)) \#(number(height))" font-family="sans-serif">"#,
            "  <title>\(escape(title(run.record)))</title>",
            ##"  <rect width="100%" height="100%" fill="#FFFFFF"/>"##,
            ##"  <text x="\##(number(margin))" y="24" font-size="16" fill="#222222">\##(escape(title(run.record)))</text>"##,
            #"  <g fill="none" stroke-width="4" stroke-linecap="round" stroke-linejoin="round">"#,
        ]
        // Consecutive segments of one colour become one polyline, which keeps the file small.
        let colours = PaceColours.colours(for: track)
        var start = 0
        while start < colours.count {
            // Segment `start` joins fixes start and start + 1; one that crosses a break is not drawn.
            if breaks.contains(start + 1) {
                start += 1
                continue
            }
            var end = start
            while end + 1 < colours.count, colours[end + 1] == colours[start], !breaks.contains(end + 2) { end += 1 }
            let points = track[start...(end + 1)].map { fix in
                let (x, y) = place(fix.coordinate)
                return "\(number(x)),\(number(y))"
            }
            lines.append(#"    <polyline stroke="\#(colours[start].hex)" points="\#(points.joined(separator: " "))"/>"#)
            start = end + 1
        }
        lines.append("  </g>")

        // One marker per badge; its tiers go in the label.
        var badgeOrder: [String] = []
        var tiersByBadge: [String: [BadgeAward]] = [:]
        for award in run.awards.map(\.award) where award.coordinate.latitude.isFinite && award.coordinate.longitude.isFinite {
            if tiersByBadge[award.badge.id] == nil { badgeOrder.append(award.badge.id) }
            tiersByBadge[award.badge.id, default: []].append(award)
        }
        lines.append(##"  <g font-size="12" fill="#222222">"##)
        for id in badgeOrder {
            guard let awards = tiersByBadge[id], let first = awards.first else { continue }
            let (x, y) = place(first.coordinate)
            let label = "\(first.badge.name) (\(awards.map(\.tier.rawValue).joined(separator: ", ")))"
            lines.append(##"    <circle cx="\##(number(x))" cy="\##(number(y))" r="6" fill="#3F51B5" stroke="#FFFFFF" stroke-width="2">"##
                + "<title>\(escape(awardDescription(first)))</title></circle>")
            // Labels stay inside the picture: one that would run off the right edge ends left of its marker,
            // one at the top edge goes below it. (12 px sans-serif is about 7 px a character.)
            let labelWidth = Double(label.count) * 7.0
            let fitsRight = x + 9 + labelWidth <= width - 4
            let labelX = fitsRight ? x + 9 : max(4 + labelWidth, x - 9)
            let labelY = min(max(y + 4, header + 12), height - legendHeight - 4)
            lines.append(#"    <text x="\#(number(labelX))" y="\#(number(labelY))"\#(fitsRight ? "" : #" text-anchor="end""#)>"#
                + #"\#(escape(label))</text>"#)
        }
        lines.append("  </g>")

        let legendY = height - legendHeight + 8
        lines.append(##"  <g font-size="12" fill="#222222">"##)
        for (index, (colour, label)) in [(PaceColours.red, "slow"), (PaceColours.yellow, "average"),
                                         (PaceColours.green, "fast")].enumerated() {
            let x = margin + Double(index) * 110
            lines.append(#"    <rect x="\#(number(x))" y="\#(number(legendY))" width="24" height="12" fill="\#(colour.hex)"/>"#)
            lines.append(#"    <text x="\#(number(x + 30))" y="\#(number(legendY + 11))">\#(label)</text>"#)
        }
        lines.append("  </g>")
        lines.append("</svg>")
        return lines.joined(separator: "\n") + "\n"
    }

    /// "Run 12 by ada — 5.02 km in 27:31".
    static func title(_ record: RunRecord) -> String {
        "Run \(record.id) by \(record.runner) — \(String(format: "%.2f", record.distance / 1000)) km in "
            + ExportFormatting.duration(record.elapsed)
    }

    /// Equirectangular projection of the run's area into a box, north up.
    struct Projection {
        let cosine: Double
        let minimumX: Double, maximumY: Double
        let scale: Double
        let height: Double

        init(track: [Fix], awards: [Coordinate], width: Double, maximumHeight: Double) {
            let coordinates = (track.map(\.coordinate) + awards).filter { $0.latitude.isFinite && $0.longitude.isFinite }
            let meanLatitude = coordinates.isEmpty ? 0 : coordinates.map(\.latitude).reduce(0, +) / Double(coordinates.count)
            let factor = max(cos(meanLatitude * .pi / 180), 0.01)
            cosine = factor
            let xs = coordinates.map { $0.longitude * factor }, ys = coordinates.map(\.latitude)
            let lowestX = xs.min() ?? 0, highestY = ys.max() ?? 0
            minimumX = lowestX
            maximumY = highestY
            let spanX = (xs.max() ?? 0) - lowestX, spanY = highestY - (ys.min() ?? 0)
            let candidates = [spanX > 0 ? width / spanX : nil, spanY > 0 ? maximumHeight / spanY : nil].compactMap { $0 }
            scale = candidates.min() ?? 1
            height = max(spanY * scale, 1)
        }

        func point(_ coordinate: Coordinate) -> (Double, Double) {
            ((coordinate.longitude * cosine - minimumX) * scale, (maximumY - coordinate.latitude) * scale)
        }
    }
}
