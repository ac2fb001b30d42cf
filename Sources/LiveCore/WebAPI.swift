import HTTP
import RunCore
import WebRoutes
import RunStore
import WebAssets
import Wire

/// The JSON API's answers, made off the loop from the store (and what the loop copied for them). Every
/// object inside is an event's JSON from Wire, so the page reads the same fields as the line protocol.
package enum WebAPI {
    /// The JSON object of one event line (with or without its newline), through Wire's one formatter.
    package static func eventJSON(_ line: [UInt8]) -> [UInt8] {
        var json: [UInt8] = []
        let text = String(decoding: line.last == UInt8(ascii: "\n") ? line.dropLast() : line[...], as: UTF8.self)
        if let event = try? ServerEvent(line: text) { event.appendJSON(to: &json) } else { json = Array("{}".utf8) }
        return json
    }

    /// `GET /api/map`: `{"leaflet":true,"tiles":"…"|null,"attribution":"…"|null,"attribution_url":"…"|null,
    /// "tiles_private":false}`, what the pages draw on (tiles and attribution null when there is no street map).
    static func mapSettings(_ map: StreetMapConfiguration) -> HTTPResponse {
        func field(_ name: String, _ text: String?, to json: inout [UInt8]) {
            json += Array(",\"\(name)\":".utf8)
            if let text { JSONSyntax.appendString(text, to: &json) } else { json += Array("null".utf8) }
        }
        let shown = map.isEnabled
        var json = Array("{\"leaflet\":\(map.leaflet != nil)".utf8)
        field("tiles", shown ? map.tiles : nil, to: &json)
        field("attribution", shown ? map.attribution : nil, to: &json)
        field("attribution_url", shown ? map.attributionURL : nil, to: &json)
        json += Array(",\"tiles_private\":\(map.tilesForPrivateRunners)}".utf8)
        return .json(json)
    }

    /// What the loop knows of a runner, copied for a badge board made off the loop: its history (newer than the
    /// store's during a run) and the live run's distance so far.
    struct LiveRunner: Sendable {
        var history: BadgeHistory
        var distance: Double
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

    /// `GET /api/runners/NAME`: `{"runner","live","last_run","track","course"}` (`track` as in the event stream,
    /// null when not running; `course` where the live run is on its course, ``progressJSON(_:)``, null when it
    /// follows none); 404 for a runner who never said `iam:`.
    ///
    /// `visible`: the private runners the request may see (its share token's); any other private runner is
    /// answered as one who never existed.
    static func runner(_ name: String, known: Bool, snapshot: TrackSnapshot?, course: CourseProgressView? = nil,
                       visible: Set<String>, store: any RunStore) throws(StoreError) -> HTTPResponse {
        // One read, whether the name is private, nobody's or public (a runner of another node may not be stored yet).
        let record = try store.runner(named: name)
        let readable = record.map { RunOwner(runner: name, privacy: $0.privacy).may(beReadBy: visible) }
        guard readable ?? (known || snapshot != nil) else { return notFound("runner", name) }
        var json = Array(#"{"runner":"#.utf8)
        JSONSyntax.appendString(name, to: &json)
        let last = try store.runs(of: name, offset: 0, limit: 1).first
        json += Array(#","live":\#(snapshot != nil),"last_run":\#(last.map { String($0.id) } ?? "null"),"track":"#.utf8)
        json += snapshot?.trackEvent(from: store) ?? Array("null".utf8)
        json += Array(#","course":"#.utf8)
        json += progressJSON(snapshot == nil ? nil : course)
        json.append(UInt8(ascii: "}"))
        return .json(json)
    }

    /// `GET /api/runners/NAME/runs?offset=&limit=`: `{"runner","offset","runs":[item…],"more"}`.
    static func runs(_ name: String, offset: Int, limit: Int, live: LiveRunView?, visible: Set<String>,
                     store: any RunStore) throws(StoreError) -> HTTPResponse {
        guard try Hub.readableRunner(name, visible: visible, in: store) != nil else { return notFound("runner", name) }
        let found = try store.runs(of: name, offset: offset, limit: limit + 1)
        var json = Array(#"{"runner":"#.utf8)
        JSONSyntax.appendString(name, to: &json)
        json += Array(#","offset":\#(offset),"limit":\#(limit),"more":\#(found.count > limit),"runs":"#.utf8)
        json += TrackSnapshot.array(found.prefix(limit).map { Hub.line(RunListItemEvent(live?.standing(in: $0) ?? $0)) })
        json.append(UInt8(ascii: "}"))
        return .json(json)
    }

    /// `GET /api/runners/NAME/badges`: `{"runner","badges":[board…33],"next"}` (`next`: the first badge not
    /// earned yet, null when all are).
    static func badges(_ name: String, live: LiveRunner?, visible: Set<String>,
                       store: any RunStore) throws(StoreError) -> HTTPResponse {
        let record = try store.runner(named: name)
        let readable = record.map { RunOwner(runner: name, privacy: $0.privacy).may(beReadBy: visible) } ?? true
        guard let history = live?.history ?? record?.history, readable else { return notFound("runner", name) }
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

    /// `GET /api/runs/ID`: `{"summary","splits","checkpoints","badges","points","elevation"}`; 404 for an unknown
    /// run. `elevation` is the profile (``TrackSnapshot/elevation(_:started:)``), `[]` without altitudes and for
    /// a runner with a privacy zone (the heights near the hidden ends would help find them).
    static func run(_ id: Int64, visible: Set<String>, store: any RunStore,
                    tracker: TrackerConfiguration) throws(StoreError) -> HTTPResponse {
        guard let (stored, owner) = try Hub.readableRun(id, visible: visible, in: store) else {
            return notFound("run", String(id))
        }
        let name = stored.record.runner
        let zone = PrivacyZone(owner.privacy)
        let fixes = try store.fixesInTimeOrder(ofRun: id)
        let summary = measured(fixes, tracker: tracker)
        let track = summary.track
        // A live run's row holds no measurements yet: its stored fixes, measured again, give them so far.
        var record = stored.record
        if record.status == .live {
            record.distance = summary.distance
            record.movingTime = summary.movingTime
            record.elapsed = summary.elapsed
            record.elevationGain = summary.elevationGain
            record.elevationLoss = summary.elevationLoss
        }
        var json = Array(#"{"summary":"#.utf8)
        json += eventJSON(Hub.line(RunSummaryEvent(record)))
        json += Array(#","splits":"#.utf8)
        json += TrackSnapshot.array(stored.splits.map { Hub.line(SplitEvent($0, runner: name)) })
        json += Array(#","checkpoints":"#.utf8)
        json += TrackSnapshot.array(stored.checkpoints.map { Hub.line(CheckpointEvent($0, runner: name)) })
        json += Array(#","badges":"#.utf8)
        json += TrackSnapshot.array(stored.awards.map { award in
            Hub.line(BadgeEvent(award.award, runner: name, hiddenBy: zone, total: stored.record.distance,
                                ends: [track.first, track.last].compactMap { $0?.coordinate }))
        })
        json += Array(#","points":"#.utf8)
        json += TrackSnapshot.points(track, started: stored.record.started, zone: zone)
        json += Array(#","elevation":"#.utf8)
        json += zone == nil ? TrackSnapshot.elevation(fixes, started: stored.record.started) : Array("[]".utf8)
        json.append(UInt8(ascii: "}"))
        return .json(json)
    }

    /// A stored run measured again: its accepted fixes through the engine, as recovery does (the smoothed
    /// track, and for a live run its values so far).
    static func measured(_ fixes: [StoredFix], tracker configuration: TrackerConfiguration) -> RunSummary {
        var tracker = RunTracker(configuration: configuration)
        for stored in fixes where stored.isAccepted {
            _ = tracker.add(stored.fix, now: stored.received)
        }
        return tracker.finish()
    }

    /// `GET /runs/ID.gpx|.geojson|.svg`: the export with its type and a download name.
    static func export(_ id: Int64, format: ExportFormat, visible: Set<String>, store: any RunStore,
                       tracker: TrackerConfiguration) throws(StoreError) -> HTTPResponse {
        guard let (found, owner) = try Hub.readableRun(id, visible: visible, in: store) else {
            return notFound("run", String(id))
        }
        var stored = found
        var fixes = try store.fixesInTimeOrder(ofRun: id)
        if let zone = PrivacyZone(owner.privacy) {
            // Others get the track without its ends, and no badge pin inside them.
            let ends = [fixes.first { $0.isAccepted }, fixes.last { $0.isAccepted }].compactMap { $0?.fix.coordinate }
            stored.awards.removeAll { award in
                zone.hides(award.award.badge.distance, of: stored.record.distance)
                    || zone.hides(award.award.coordinate, near: ends)
            }
            fixes = zone.trim(fixes)
            // Nor the kilometre marks (GeoJSON's split points, TCX's laps): a place known to be 1 km from the
            // start tells, on a straight, where the start is.
            stored.splits = []
        }
        let source = try store.importRecord(ofRun: id)
        let body: String
        switch format {
        case .gpx: body = RunExport.gpx(stored, fixes: fixes, source: source)
        // Measured with the server's tracker, as `run` measures the track the page draws.
        case .geojson: body = RunExport.geoJSON(stored, fixes: fixes, source: source, tracker: tracker)
        case .svg: body = RunExport.svg(stored, fixes: fixes, source: source, tracker: tracker)
        case .tcx: body = RunExport.tcx(stored, fixes: fixes, source: source)
        }
        var response = HTTPResponse(status: .ok, body: Array(body.utf8))
        response.headers.set("Content-Type", format.contentType)
        response.headers.set("Content-Disposition", format.contentDisposition(run: id))
        return response
    }

    static func notFound(_ what: String, _ name: String) -> HTTPResponse {
        .text(.notFound, "no \(what) \(name)\n")
    }
}
