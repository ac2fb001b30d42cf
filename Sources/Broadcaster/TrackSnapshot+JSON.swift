import LiveCore
import RunCore
import RunStore
import Wire

/// The track event a snapshot makes for the web page (JSON), off the loop.
extension TrackSnapshot {
    /// `{"kind":"track","runner":…,"run":ID,"points":[[lat,lon,dist,time],…],"badges":[…],"splits":[…],
    /// "cheers":[…],"pace":{…}|null}` (badges, splits, cheers and pace as their events' JSON).
    func trackEvent(from store: any RunStore) -> [UInt8] {
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
        json += paceLine.map(ServerCore.eventJSON) ?? Array("null".utf8)
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
            json += ServerCore.eventJSON(line)
        }
        json.append(UInt8(ascii: "]"))
        return json
    }
}

extension Hub {
    /// What the loop knows of a runner, for a JSON answer made off the loop (nil when not in memory).
    func liveRunner(_ name: String) -> WebAPI.LiveRunner? {
        guard let history = runners[name]?.history ?? remoteRuns[name]?.startHistory else { return nil }
        return WebAPI.LiveRunner(history: history, distance: liveRun(of: name)?.distance ?? 0)
    }

    /// The subject of an event line (`end:NAME …` → NAME).
    static func subject(of line: [UInt8]) -> String {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return "" }
        return String(decoding: line[(colon + 1)...].prefix { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\n") },
                      as: UTF8.self)
    }

    /// `GET /api/overview`: `{"live":[{"runner","run","pace"}…],"ended":[end…]}`, live runners by distance.
    func overviewJSON() -> [UInt8] {
        // In the leaderboard's order now (the page keeps it up to date from `rank:` events).
        let places = Dictionary(leaderboard.standings(goal: nil, limit: .max).standings.map { ($0.0, $0.1.position) },
                                uniquingKeysWith: { first, _ in first })
        let live = visibleLiveRunnerNames(for: nil).compactMap { name -> (String, Int64, [UInt8]?, Int)? in
            guard let run = liveRun(of: name) else { return nil }
            return (name, run.runID, run.latestPaceLine, places[name] ?? Int.max)
        }.sorted { ($0.3, $0.0) < ($1.3, $1.0) }
        var json = Array(#"{"live":["#.utf8)
        for (index, runner) in live.enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            json += Array(#"{"runner":"#.utf8)
            JSONSyntax.appendString(runner.0, to: &json)
            json += Array(#","run":\#(runner.1),"pos":\#(runner.3 == Int.max ? "null" : String(runner.3)),"course":"#.utf8)
            if let course = courseProgress(of: runner.0)?.course {
                JSONSyntax.appendString(course, to: &json)
            } else {
                json += Array("null".utf8)
            }
            json += Array(#","pace":"#.utf8)
            json += runner.2.map(ServerCore.eventJSON) ?? Array("null".utf8)
            json.append(UInt8(ascii: "}"))
        }
        json += Array(#"],"ended":"#.utf8)
        json += TrackSnapshot.array(recentlyEnded.reversed().filter { !isPrivate(Self.subject(of: $0)) })
        json.append(UInt8(ascii: "}"))
        return json
    }
}
