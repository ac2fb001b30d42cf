import Foundation
import RunCore

/// A finished run written out for other tools: GPX 1.1, GeoJSON and SVG. All take the run and its stored
/// fixes and use only the accepted ones.
public enum RunExport {
    /// The XML namespace of MoonRunner's GPX extension elements (`<moonrunner:accuracy>` in metres).
    public static let gpxExtensionNamespace = "urn:moonrunner:gpx:1"

    /// GPX 1.1 (valid against the topografix schema): badge awards as waypoints, the accepted fixes as one
    /// track segment with times in UTC and each fix's accuracy in an extension element.
    public static func gpx(_ run: StoredRun, fixes: [StoredFix]) -> String {
        let record = run.record
        let escape = ExportFormatting.xmlEscaped
        let decimal = { (value: Double) in ExportFormatting.decimal(value) }
        var lines: [String] = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<gpx version="1.1" creator="MoonRunner Live" xmlns="http://www.topografix.com/GPX/1/1" "#
                + #"xmlns:moonrunner="\#(gpxExtensionNamespace)" "#
                + #"xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" "#
                + #"xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd">"#,
            "  <metadata>",
            "    <name>\(escape("Run \(record.id) by \(record.runner)"))</name>",
            "    <time>\(ExportFormatting.isoTime(record.started))</time>",
            "  </metadata>",
        ]
        for stored in run.awards {
            let award = stored.award
            guard award.coordinate.latitude.isFinite, award.coordinate.longitude.isFinite else { continue }
            lines.append(#"  <wpt lat="\#(decimal(award.coordinate.latitude))" lon="\#(decimal(award.coordinate.longitude))">"#)
            lines.append("    <time>\(ExportFormatting.isoTime(award.timestamp))</time>")
            lines.append("    <name>\(escape("\(award.badge.name) (\(award.tier.rawValue))"))</name>")
            lines.append("    <desc>\(escape(awardDescription(award)))</desc>")
            lines.append("    <type>badge</type>")
            lines.append("  </wpt>")
        }
        lines.append("  <trk>")
        lines.append("    <name>\(escape("Run \(record.id) by \(record.runner)"))</name>")
        lines.append("    <type>running</type>")
        lines.append("    <trkseg>")
        for stored in fixes where stored.isAccepted {
            let fix = stored.fix
            lines.append(#"      <trkpt lat="\#(decimal(fix.latitude))" lon="\#(decimal(fix.longitude))">"#
                + "<time>\(ExportFormatting.isoTime(fix.timestamp))</time>"
                + "<extensions><moonrunner:accuracy>\(ExportFormatting.decimal(fix.accuracy, places: 3))"
                + "</moonrunner:accuracy></extensions></trkpt>")
        }
        lines.append("    </trkseg>")
        lines.append("  </trk>")
        lines.append("</gpx>")
        return lines.joined(separator: "\n") + "\n"
    }

    /// "Moon earned at 12:34 of the run (checkpoint speed 3.10 m/s), 384400000 m" for a waypoint description.
    static func awardDescription(_ award: BadgeAward) -> String {
        "\(award.badge.name) \(award.tier.rawValue) at \(ExportFormatting.duration(award.elapsed)) of the run "
            + "(checkpoint speed \(String(format: "%.2f", award.speed)) m/s), "
            + "\(ExportFormatting.decimal(award.badge.distance, places: 0)) m"
    }

    /// The accepted fixes in order.
    static func acceptedFixes(_ fixes: [StoredFix]) -> [Fix] {
        fixes.filter(\.isAccepted).sorted { $0.sequence < $1.sequence }.map(\.fix)
    }

    /// Where the run was at `elapsed` seconds after its first accepted fix, interpolated between fixes.
    static func position(atElapsed elapsed: Double, on track: [Fix]) -> Coordinate? {
        guard let first = track.first else { return nil }
        let time = first.timestamp + elapsed
        guard let after = track.firstIndex(where: { $0.timestamp >= time }) else { return track.last?.coordinate }
        guard after > 0 else { return first.coordinate }
        let a = track[after - 1], b = track[after]
        let span = b.timestamp - a.timestamp
        let t = span > 0 ? (time - a.timestamp) / span : 1
        return Coordinate(latitude: a.latitude + (b.latitude - a.latitude) * t,
                          longitude: a.longitude + (b.longitude - a.longitude) * t)
    }
}
