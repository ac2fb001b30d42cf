import RunCore
import RunStore
import Wire

/// The track event a snapshot makes for the web page (JSON), off the loop.
extension TrackSnapshot {
    /// `{"kind":"track","runner":…,"run":ID,"points":[[lat,lon,dist,time],…],"badges":[…],"splits":[…],
    /// "cheers":[…],"pace":{…}|null}` (badges, splits, cheers and pace as their events' JSON).
    package func trackEvent(from store: any RunStore) -> [UInt8] {
        let summary = (try? Hub.replay(runID, from: store, configuration: configuration, history: history))
            ?? RunTracker(configuration: configuration).finish()
        var json = Array(#"{"kind":"track","runner":"#.utf8)
        JSONSyntax.appendString(runner, to: &json)
        json += Array(#","run":\#(runID),"points":"#.utf8)
        json += Self.points(summary.track, started: started, zone: zone)
        json += Array(#","badges":"#.utf8)
        json += Self.array(badgeLines)
        json += Array(#","splits":"#.utf8)
        json += Self.array(summary.splits.map { Hub.line(SplitEvent($0, runner: runner)) })
        json += Array(#","cheers":"#.utf8)
        json += Self.array(cheerLines)
        json += Array(#","pace":"#.utf8)
        json += paceLine.map(WebAPI.eventJSON) ?? Array("null".utf8)
        json.append(UInt8(ascii: "}"))
        return json
    }

    /// `[[lat,lon,dist,time],…]`: the smoothed track with the distance along it and the seconds since the
    /// start, what the page draws and colours by pace. With a privacy zone only the points outside it are
    /// written, and their distance and time count from the first of them: a point's distance from the hidden
    /// start would say, on a straight, where the start is (its heading and how far back).
    static func points(_ track: [Fix], started: Double, zone: PrivacyZone? = nil) -> [UInt8] {
        var json: [UInt8] = [UInt8(ascii: "[")]
        json.reserveCapacity(track.count * 40)
        let shown = zone?.visible(track.map(\.coordinate))
        var distance = 0.0
        var previous: Fix?
        var written = 0
        var origin: (distance: Double, time: Double)? = zone == nil ? (0, started) : nil
        for (index, fix) in track.enumerated() {
            if let previous { distance += Geodesy.distance(from: previous.coordinate, to: fix.coordinate) }
            previous = fix
            if let shown, !shown[index] { continue }
            if written > 0 { json.append(UInt8(ascii: ",")) }
            written += 1
            let from = origin ?? (distance, fix.timestamp)
            origin = from
            json += Array(("[" + NumberFormat.string(fix.latitude, decimals: 7) + ","
                + NumberFormat.string(fix.longitude, decimals: 7) + "," + NumberFormat.string(distance - from.distance, decimals: 2)
                + "," + NumberFormat.string(fix.timestamp - from.time, decimals: 1) + "]").utf8)
        }
        json.append(UInt8(ascii: "]"))
        return json
    }

    /// `[…]` of the lines' JSON objects.
    static func array(_ lines: [[UInt8]]) -> [UInt8] {
        var json: [UInt8] = [UInt8(ascii: "[")]
        for (index, line) in lines.enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            json += WebAPI.eventJSON(line)
        }
        json.append(UInt8(ascii: "]"))
        return json
    }
}
