import Foundation
import RunCore

extension RunExport {
    /// Garmin Training Center XML v2 (valid against Garmin's schema): one running activity with a lap per
    /// kilometre split (its time and distance are the engine's), a `<Track>` per stretch between pauses inside
    /// a lap, and each fix's accuracy in a trackpoint extension, so that importing the file again gives the
    /// same run. Badges go into the activity's notes (TCX has no waypoints); the device's distance of an
    /// imported run (from `source`) into the activity's extensions.
    public static func tcx(_ run: StoredRun, fixes: [StoredFix], source: ImportRecord? = nil) -> String {
        let record = run.record
        let escape = ExportFormatting.xmlEscaped
        let decimal = ExportFormatting.exact
        var lines: [String] = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<TrainingCenterDatabase xmlns="\#(TCXReader.namespace)" "#
                + #"xmlns:moonrunner="\#(tcxExtensionNamespace)" "#
                + #"xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" "#
                + #"xsi:schemaLocation="\#(TCXReader.namespace) http://www.garmin.com/xmlschemas/TrainingCenterDatabasev2.xsd">"#,
            "  <Activities>",
            #"    <Activity Sport="Running">"#,
            "      <Id>\(ExportFormatting.isoTime(record.started))</Id>",
        ]
        let segments = segments(of: fixes, pausesBefore: source?.pausesBefore ?? [])
        let start = segments.first?.first?.timestamp ?? record.started
        for lap in laps(of: run, segments: segments, start: start) {
            lines.append(#"      <Lap StartTime="\#(ExportFormatting.isoTime(start + lap.startElapsed))">"#)
            lines.append("        <TotalTimeSeconds>\(ExportFormatting.decimal(lap.duration, places: 3))</TotalTimeSeconds>")
            lines.append("        <DistanceMeters>\(ExportFormatting.decimal(lap.distance, places: 3))</DistanceMeters>")
            lines.append("        <Calories>0</Calories>")
            lines.append("        <Intensity>Active</Intensity>")
            lines.append("        <TriggerMethod>Distance</TriggerMethod>")
            for track in lap.tracks {
                lines.append("        <Track>")
                for fix in track {
                    lines.append("          <Trackpoint><Time>\(ExportFormatting.isoTime(fix.timestamp))</Time>"
                        + "<Position><LatitudeDegrees>\(decimal(fix.latitude))</LatitudeDegrees>"
                        + "<LongitudeDegrees>\(decimal(fix.longitude))</LongitudeDegrees></Position>"
                        + ExportFormatting.element("AltitudeMeters", fix.altitude)
                        + "<Extensions><moonrunner:accuracy>\(ExportFormatting.exact(fix.accuracy))"
                        + "</moonrunner:accuracy></Extensions></Trackpoint>")
                }
                lines.append("        </Track>")
            }
            lines.append("      </Lap>")
        }
        var notes = ["Run \(record.id) by \(record.runner): \(ExportFormatting.runLine(record))"]
        notes += run.awards.map { awardDescription($0.award) }
        lines.append("      <Notes>\(escape(notes.joined(separator: "\n")))</Notes>")
        if let metres = source?.deviceDistance, metres.isFinite {
            lines.append("      <Extensions><moonrunner:deviceDistance>\(ExportFormatting.decimal(metres, places: 3))"
                + "</moonrunner:deviceDistance></Extensions>")
        }
        lines.append("    </Activity>")
        lines.append("  </Activities>")
        lines.append("</TrainingCenterDatabase>")
        return lines.joined(separator: "\n") + "\n"
    }

    /// One lap of a TCX export.
    struct Lap {
        /// Seconds from the run's start to the lap's start.
        var startElapsed: Double
        var duration: Double
        var distance: Double
        /// The lap's fixes, a track per stretch between pauses.
        var tracks: [[Fix]]
    }

    /// Laps at the run's kilometre splits; the last one ends with the run. A fix belongs to the lap in which
    /// it was taken; a pause inside a lap starts a new track (a kilometre is never crossed across a pause,
    /// where no distance is counted, so a lap never starts exactly at a pause).
    static func laps(of run: StoredRun, segments: [[Fix]], start: Double) -> [Lap] {
        let record = run.record
        let kilometres = run.splits.filter { $0.unit == .kilometre }.sorted { $0.number < $1.number }
        var laps: [Lap] = []
        var previous = 0.0
        for split in kilometres {
            laps.append(Lap(startElapsed: previous, duration: split.elapsed - previous, distance: 1000, tracks: []))
            previous = split.elapsed
        }
        let remaining = record.distance - Double(kilometres.count) * 1000
        if laps.isEmpty || remaining > 0.0005 || record.elapsed > previous {
            laps.append(Lap(startElapsed: previous, duration: max(record.elapsed - previous, 0),
                            distance: max(remaining, 0), tracks: []))
        }
        var lapIndex = 0
        for segment in segments {
            var trackLap = -1
            for fix in segment {
                let elapsed = fix.timestamp - start
                while lapIndex + 1 < laps.count, elapsed >= laps[lapIndex + 1].startElapsed { lapIndex += 1 }
                if trackLap != lapIndex {
                    laps[lapIndex].tracks.append([])
                    trackLap = lapIndex
                }
                laps[lapIndex].tracks[laps[lapIndex].tracks.count - 1].append(fix)
            }
        }
        return laps
    }
}
