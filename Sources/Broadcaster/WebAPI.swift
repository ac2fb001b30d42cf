import HTTP
import RunCore
import RunStore
import Wire

/// The JSON API's answers, made off the loop from the store (and what the loop copied for them). Every
/// object inside is an event's JSON from Wire, so the page reads the same fields as the line protocol.
enum WebAPI {
    /// What the loop knows of a runner's live run, copied for an answer made off the loop.
    struct LiveRunner: Sendable {
        var history: BadgeHistory?
        var runID: Int64?
        var distance: Double
        var paceLine: [UInt8]?
        var badgeLines: [[UInt8]]
    }

    /// `GET /api/badges`: the 33 badges, `[{"id","name","distance","information"}]`.
    static let catalogue: HTTPResponse = {
        var json: [UInt8] = [UInt8(ascii: "[")]
        for (index, badge) in Badges.all.enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            json += Array(#"{"id":"#.utf8)
            JSONSyntax.appendString(badge.id, to: &json)
            json += Array(#","name":"#.utf8)
            JSONSyntax.appendString(badge.name, to: &json)
            json += Array(#","distance":\#(NumberFormat.string(badge.distance, decimals: 2)),"information":"#.utf8)
            JSONSyntax.appendString(badge.information, to: &json)
            json.append(UInt8(ascii: "}"))
        }
        json.append(UInt8(ascii: "]"))
        return .json(json)
    }()

    /// `GET /api/runners/NAME`: `{"runner","live","run","pace","badges","last_run"}`; 404 for an unknown runner.
    static func runner(_ name: String, live: LiveRunner?, store: any RunStore) throws(StoreError) -> HTTPResponse {
        let known = try store.runner(named: name) != nil
        guard live != nil || known else { return notFound("runner", name) }
        var json = Array(#"{"runner":"#.utf8)
        JSONSyntax.appendString(name, to: &json)
        json += Array(#","live":\#(live?.runID != nil),"run":\#(live?.runID.map(String.init) ?? "null"),"pace":"#.utf8)
        json += live?.paceLine.map(Server.eventJSON) ?? Array("null".utf8)
        json += Array(#","badges":"#.utf8)
        json += TrackSnapshot.array(live?.badgeLines ?? [])
        let last = try store.runs(of: name, offset: 0, limit: 2).first { $0.status != .live || $0.id != live?.runID }
        json += Array(#","last_run":\#(last.map { String($0.id) } ?? "null")}"#.utf8)
        return .json(json)
    }

    /// `GET /api/runners/NAME/runs?offset=&limit=`: `{"runner","offset","runs":[item…],"more"}`.
    static func runs(_ name: String, offset: Int, limit: Int, store: any RunStore) throws(StoreError) -> HTTPResponse {
        guard try store.runner(named: name) != nil else { return notFound("runner", name) }
        let found = try store.runs(of: name, offset: offset, limit: limit + 1)
        var json = Array(#"{"runner":"#.utf8)
        JSONSyntax.appendString(name, to: &json)
        json += Array(#","offset":\#(offset),"runs":"#.utf8)
        json += TrackSnapshot.array(found.prefix(limit).map { Hub.line(RunListItemEvent($0)) })
        json += Array(#","more":\#(found.count > limit)}"#.utf8)
        return .json(json)
    }

    /// `GET /api/runners/NAME/badges`: `{"runner","badges":[board…33],"next"}` (`next`: the first badge not
    /// earned yet, null when all are).
    static func badges(_ name: String, live: LiveRunner?, store: any RunStore) throws(StoreError) -> HTTPResponse {
        let record = try store.runner(named: name)
        guard let history = live?.history ?? record?.history else { return notFound("runner", name) }
        let farthest = max(live?.distance ?? 0, try store.farthestDistance(of: name))
        var json = Array(#"{"runner":"#.utf8)
        JSONSyntax.appendString(name, to: &json)
        json += Array(#","badges":"#.utf8)
        json += TrackSnapshot.array(Badges.all.map { badge in
            Hub.line(BoardEvent(badge: badge, runner: name, record: history.records[badge.id], farthest: farthest))
        })
        let next = Badges.all.first { history.records[$0.id] == nil }
        json += Array(#","next":"#.utf8)
        if let next { JSONSyntax.appendString(next.id, to: &json) } else { json += Array("null".utf8) }
        json.append(UInt8(ascii: "}"))
        return .json(json)
    }

    /// `GET /api/runs/ID`: `{"summary","splits","checkpoints","badges","points"}`; 404 for an unknown run.
    static func run(_ id: Int64, store: any RunStore, tracker: TrackerConfiguration) throws(StoreError) -> HTTPResponse {
        guard let stored = try store.run(id: id) else { return notFound("run", String(id)) }
        let name = stored.record.runner
        var json = Array(#"{"summary":"#.utf8)
        json += Server.eventJSON(Hub.line(RunSummaryEvent(stored.record)))
        json += Array(#","splits":"#.utf8)
        json += TrackSnapshot.array(stored.splits.map { Hub.line(SplitEvent($0, runner: name)) })
        json += Array(#","checkpoints":"#.utf8)
        json += TrackSnapshot.array(stored.checkpoints.map { Hub.line(CheckpointEvent($0, runner: name)) })
        json += Array(#","badges":"#.utf8)
        json += TrackSnapshot.array(stored.awards.map { Hub.line(BadgeEvent($0.award, runner: name)) })
        json += Array(#","points":"#.utf8)
        json += TrackSnapshot.points(try smoothedTrack(of: id, store: store, tracker: tracker),
                                     started: stored.record.started)
        json.append(UInt8(ascii: "}"))
        return .json(json)
    }

    /// A stored run's smoothed track: its accepted fixes through the engine again, as recovery does.
    static func smoothedTrack(of id: Int64, store: any RunStore, tracker configuration: TrackerConfiguration)
        throws(StoreError) -> [Fix] {
        var tracker = RunTracker(configuration: configuration)
        for stored in try store.fixes(ofRun: id) where stored.isAccepted {
            _ = tracker.add(stored.fix, now: stored.received)
        }
        return tracker.finish().track
    }

    /// `GET /runs/ID.gpx|.geojson|.svg`: the export with its type and a download name.
    static func export(_ id: Int64, format: String, store: any RunStore) throws(StoreError) -> HTTPResponse {
        guard let stored = try store.run(id: id) else { return notFound("run", String(id)) }
        let fixes = try store.fixes(ofRun: id)
        let (body, type): (String, String)
        switch format {
        case "gpx": (body, type) = (RunExport.gpx(stored, fixes: fixes), "application/gpx+xml")
        case "geojson": (body, type) = (RunExport.geoJSON(stored, fixes: fixes), "application/geo+json")
        default: (body, type) = (RunExport.svg(stored, fixes: fixes), "image/svg+xml")
        }
        var response = HTTPResponse(status: .ok, body: Array(body.utf8))
        response.headers.set("Content-Type", type)
        response.headers.set("Content-Disposition", "attachment; filename=\"run-\(id).\(format)\"")
        return response
    }

    static func notFound(_ what: String, _ name: String) -> HTTPResponse {
        .text(.notFound, "no \(what) \(name)\n")
    }
}
