import LiveCore
import HTTP
import WebRoutes
import RunCore
import RunStore
import Wire

/// `GET /events`: Server-Sent Events. A stream is a spectator (or coach) like a TCP one: a hub session with
/// the same subscriptions (the hub's decision), the same conflation of `pace` for slow readers and the same
/// hard limit; its lines go out as `event: KIND` with the line's JSON (one formatter in Wire feeds both).
extension ServerCore {
    /// Most events held while a stream's snapshot is read; a stream behind by more is closed.
    static let maximumHeldEvents = 4096

    /// Turns a connection into an event stream for `watch=NAME|*` or `coach=NAME|*`: the hub says what it
    /// follows and how it starts (``Hub/openStream(_:following:token:lastEventID:address:mayRead:now:)``); the
    /// server writes the head, holds the events that arrive while a snapshot is read, and frames them.
    func openEventStream(_ request: HTTPRequest, on connection: HTTPConnection, now: Double) {
        let targets: [(WatchTarget, coach: Bool)]
        switch hub.streamTargets(of: request) {
        case .follow(let followed): targets = followed
        case .refuse(let refusal):
            return write(refusal, to: connection, keepAlive: false, head: request.method == "HEAD")
        }
        metrics.countResponse(200)
        var head: [UInt8] = []
        Self.eventStreamHead.append(to: &head, framing: .untilClose, keepAlive: false, date: httpDate())
        if request.method == "HEAD" {
            // The head a GET would get, and no body: the body would be the stream, so the connection ends there.
            _ = connection.output.append(head, as: .reply, highWaterMark: .max)
            scheduleFlush(connection)
            closeAfterOutput(connection, reason: "http: HEAD of an event stream")
            return
        }
        ServerSentEvent.appendRetry(milliseconds: 3000, to: &head)
        _ = connection.output.append(head, as: .reply, highWaterMark: .max)
        connection.stream = EventStream(held: [], lastWrite: now)
        scheduleFlush(connection)
        let start = decide {
            $0.openStream(connection.id, following: targets, token: WebRoute.shareToken(in: request),
                          lastEventID: request.lastEventID.flatMap(UInt64.init), address: Self.address(of: connection),
                          mayRead: !readsAreFull, now: now)
        }
        switch start {
        case .missed(let missed):
            connection.stream?.held = []
            replaceHeld(connection, with: missed.map { entry in
                (frame(entry.line, sequence: entry.sequence) ?? [], entry.role, false)
            })
        case .live:
            releaseHeld(connection)
        case .snapshot(let snapshot):
            let id = connection.id
            readOffLoop({ store in snapshot.trackEvent(from: store) }) { [unowned self] track in
                guard let connection = connections[id] as? HTTPConnection, connection.stream != nil else { return }
                var bytes: [UInt8] = []
                ServerSentEvent.append(id: nil, event: "track", data: track, to: &bytes)
                _ = connection.output.append(bytes, as: .reply, highWaterMark: .max)
                // The track holds everything the catch-up lines would say: only what happened since follows it.
                connection.stream?.held?.removeAll { $0.isCatchUp }
                releaseHeld(connection)
            }
        }
    }

    /// Frames a line for a stream (or holds it while the snapshot is made); false when nothing was conflated.
    /// The frame keeps the line's `role`: its text (`id: …`) no longer says which runner it is about.
    func deliverToStream(_ connection: HTTPConnection, _ line: [UInt8], as role: LineRole, sequence: UInt64?) -> Bool {
        guard var stream = connection.stream, let shared = sharedFrame(of: line, sequence: sequence) else { return false }
        if stream.held != nil {
            // Lines without a number are the subscriptions' catch-up (run, badges, latest pace).
            connection.stream?.held?.append((Array(shared.bytes), role, sequence == nil))
            if (connection.stream?.held?.count ?? 0) > Self.maximumHeldEvents {
                // Marked, not closed: this runs while the hub's effects are carried out, and closing tells the
                // hub (`disconnected`), a decision inside that; a doomed peer gets nothing more, and is closed
                // at the end of the turn.
                connection.stream?.held?.removeAll()
                closeAtTurnEnd(connection, reason: "event stream: too many events before its snapshot")
            }
            return false
        }
        stream.lastWrite = Self.now()
        connection.stream = stream
        return connection.output.append(shared, as: role, highWaterMark: configuration.outputHighWaterMark)
    }

    /// One copy of a broadcast's frame for every stream it goes to (a frame is the same for all of them: the same
    /// line, the same id).
    func sharedFrame(of line: [UInt8], sequence: UInt64?) -> SharedLine? {
        if let cached = streamFrameCache, cached.sequence == sequence, cached.line == line { return cached.frame }
        guard let bytes = frame(line, sequence: sequence) else { return nil }
        let shared = SharedLine.copying(bytes)
        streamFrameCache = (line, sequence, shared)
        return shared
    }

    /// `id:`, `event:` and `data:` for one event line; nil for the kinds a stream does not carry.
    func frame(_ line: [UInt8], sequence: UInt64?) -> [UInt8]? {
        EventStreamFrame.frame(line, sequence: sequence, json: json(forLine: line))
    }

    /// The JSON of an event line; the last one is remembered, as a broadcast hands the same line to every
    /// stream in turn.
    func json(forLine line: [UInt8]) -> [UInt8] {
        if let cached = streamJSONCache, cached.line == line { return cached.json }
        var json: [UInt8] = []
        if let typed = currentBroadcast?.typed, typed.line == line {
            // Written from the event the line was made from: nothing parsed back.
            typed.event.appendJSON(to: &json)
            assert(json == WebAPI.eventJSON(line), "an event's JSON says other than its line: \(String(decoding: line, as: UTF8.self))")
        } else {
            json = WebAPI.eventJSON(line)
        }
        streamJSONCache = (line, json)
        return json
    }


    /// Sends what was held (after the snapshot), then lets events flow straight through.
    private func releaseHeld(_ connection: HTTPConnection) {
        replaceHeld(connection, with: [])
    }

    private func replaceHeld(_ connection: HTTPConnection, with first: [(bytes: [UInt8], role: LineRole, isCatchUp: Bool)]) {
        guard var stream = connection.stream else { return }
        let held = stream.held ?? []
        stream.held = nil
        stream.lastWrite = Self.now()
        connection.stream = stream
        for event in first + held where !event.bytes.isEmpty {
            if connection.output.append(event.bytes, as: event.role, highWaterMark: configuration.outputHighWaterMark) {
                connectionStatistics.eventsConflated += 1
            }
        }
        scheduleFlush(connection)
    }
}
