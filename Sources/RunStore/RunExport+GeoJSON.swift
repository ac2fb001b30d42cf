import Foundation
import RunCore

extension RunExport {
    /// Line width of route segments in GeoJSON (simplestyle `stroke-width`).
    static let routeStrokeWidth = 4

    /// A GeoJSON FeatureCollection: the route as the run page draws it (the measured track, as `tracker`, the
    /// server's, measures it for the page) as one LineString per segment coloured by ``PaceColours``
    /// (simplestyle `stroke`, `stroke-width`, plus `speed` in m/s), a Point where each badge was reached
    /// (`name`, `badge`, `tier`, `distance` in metres, `elapsed`, `time`) and a Point at each kilometre split
    /// (`number`, `elapsed`, `duration`, `pace` in s/km). No segment is drawn across a pause (from `source`)
    /// or a re-anchor.
    public static func geoJSON(_ run: StoredRun, fixes: [StoredFix], source: ImportRecord? = nil,
                               tracker: TrackerConfiguration = .init()) -> String {
        let (track, breaks) = measuredTrack(of: fixes, pausesBefore: source?.pausesBefore ?? [], configuration: tracker)
        let colours = PaceColours.colours(for: track)
        var features: [[String: Any]] = []
        for index in colours.indices where !breaks.contains(index + 1) {
            let a = track[index], b = track[index + 1]
            var properties: [String: Any] = [
                "kind": "route", "stroke": colours[index].hex, "stroke-width": routeStrokeWidth,
            ]
            let duration = b.timestamp - a.timestamp
            let speed = Geodesy.distance(from: a.coordinate, to: b.coordinate) / duration
            if duration > 0, speed.isFinite { properties["speed"] = speed }
            features.append(feature(geometry: ["type": "LineString", "coordinates": [position(a.coordinate), position(b.coordinate)]],
                                    properties: properties))
        }
        for stored in run.awards {
            let award = stored.award
            guard award.coordinate.latitude.isFinite, award.coordinate.longitude.isFinite else { continue }
            features.append(feature(geometry: ["type": "Point", "coordinates": position(award.coordinate)], properties: [
                "kind": "badge", "name": award.badge.name, "badge": award.badge.id, "tier": award.tier.rawValue,
                "distance": finite(award.badge.distance), "elapsed": finite(award.elapsed),
                "speed": finite(award.speed), "time": ExportFormatting.isoTime(award.timestamp),
                "marker-symbol": "star", "marker-color": "#3F51B5",
            ]))
        }
        for split in run.splits where split.unit == .kilometre {
            guard let coordinate = position(atElapsed: split.elapsed, on: track) else { continue }
            features.append(feature(geometry: ["type": "Point", "coordinates": position(coordinate)], properties: [
                "kind": "split", "name": "km \(split.number)", "number": split.number,
                "elapsed": finite(split.elapsed), "duration": finite(split.duration), "pace": finite(split.pace),
                "marker-symbol": String(split.number % 10), "marker-color": "#555555",
            ]))
        }
        let collection: [String: Any] = [
            "type": "FeatureCollection",
            "properties": ["run": run.record.id, "runner": run.record.runner, "status": run.record.status.rawValue,
                           "distance": finite(run.record.distance), "elapsed": finite(run.record.elapsed)],
            "features": features,
        ]
        do {
            let data = try JSONSerialization.data(withJSONObject: collection, options: [.sortedKeys])
            return String(decoding: data, as: UTF8.self) + "\n"
        } catch {
            // Only non-finite numbers could fail, and every number above is made finite first.
            preconditionFailure("GeoJSON serialization failed: \(error)")
        }
    }

    private static func feature(geometry: [String: Any], properties: [String: Any]) -> [String: Any] {
        ["type": "Feature", "geometry": geometry, "properties": properties]
    }

    /// `[longitude, latitude]`, GeoJSON's order.
    private static func position(_ coordinate: Coordinate) -> [Double] {
        [finite(coordinate.longitude), finite(coordinate.latitude)]
    }

    /// JSON has no NaN or infinity.
    private static func finite(_ value: Double) -> Double { value.isFinite ? value : 0 }
}
