import Foundation
import RunCore

/// A finished run written out for other tools: GPX 1.1, TCX v2, GeoJSON and SVG. All take the run and its
/// stored fixes and use only the accepted ones.
public enum RunExport {
    /// The XML namespace of MoonRunner's GPX extension elements (`<moonrunner:accuracy>` in metres on each
    /// point, `<moonrunner:deviceDistance>` in metres on the track).
    public static let gpxExtensionNamespace = "urn:moonrunner:gpx:1"
    /// The XML namespace of the same extension elements in TCX.
    public static let tcxExtensionNamespace = "urn:moonrunner:tcx:1"
    /// Both, as the importers accept either.
    static let extensionNamespaces: Set<String> = [gpxExtensionNamespace, tcxExtensionNamespace]

    /// GPX 1.1 (valid against the topografix schema): badge awards as waypoints, the accepted fixes as a
    /// track with a segment per stretch between pauses (see ``segments(of:pausesBefore:)``), times in UTC,
    /// each fix's altitude as `<ele>` when it had one and its accuracy in an extension element, so that
    /// importing the file again gives the same run.
    /// `source` (the run's import record, if any) gives the pauses and the device's distance.
    public static func gpx(_ run: StoredRun, fixes: [StoredFix], source: ImportRecord? = nil) -> String {
        let record = run.record
        let escape = ExportFormatting.xmlEscaped
        let decimal = ExportFormatting.exact
        let title = escape("Run \(record.id) by \(record.runner)")
        var lines: [String] = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<gpx version="1.1" creator="MoonRunner Live" xmlns="http://www.topografix.com/GPX/1/1" "#
                + #"xmlns:moonrunner="\#(gpxExtensionNamespace)" "#
                + #"xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" "#
                + #"xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd">"#,
            "  <metadata>",
            "    <name>\(title)</name>",
            "    <desc>\(escape(ExportFormatting.runLine(record)))</desc>",
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
        lines.append("    <name>\(title)</name>")
        lines.append("    <type>running</type>")
        if let metres = source?.deviceDistance, metres.isFinite {
            lines.append("    <extensions><moonrunner:deviceDistance>\(ExportFormatting.decimal(metres, places: 3))"
                + "</moonrunner:deviceDistance></extensions>")
        }
        let segments = segments(of: fixes, pausesBefore: source?.pausesBefore ?? [])
        for segment in segments.isEmpty ? [[]] : segments {
            lines.append("    <trkseg>")
            for fix in segment {
                // The schema puts <ele> before <time>.
                lines.append(#"      <trkpt lat="\#(decimal(fix.latitude))" lon="\#(decimal(fix.longitude))">"#
                    + ExportFormatting.element("ele", fix.altitude)
                    + "<time>\(ExportFormatting.isoTime(fix.timestamp))</time>"
                    + "<extensions><moonrunner:accuracy>\(ExportFormatting.exact(fix.accuracy))"
                    + "</moonrunner:accuracy></extensions></trkpt>")
            }
            lines.append("    </trkseg>")
        }
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
