import LiveCore
import HTTP
import WebRoutes
import RunCore
import RunStore
import Wire

/// `GET /events`: Server-Sent Events. A stream is a spectator (or coach) like a TCP one: a hub session with
/// the same subscriptions, the same conflation of `pace` for slow readers and the same hard limit; its
/// lines go out as `event: KIND` with the line's JSON (one formatter in Wire feeds both).
extension ServerCore {
    /// The event kinds a stream carries: a runner's broadcasts, not replies to commands it never sent.
    static let streamedKinds: Set<String> = ["run", "pace", "split", "badge", "end", "msg", "rank", "alert", "dropped", "point"]

    /// Most events held while a stream's snapshot is read; a stream behind by more is closed.
    static let maximumHeldEvents = 4096

    /// Turns a connection into an event stream for `watch=NAME|*` or `coach=NAME|*`.
    func openEventStream(_ request: HTTPRequest, on connection: HTTPConnection, now: Double) {
        var targets: [(WatchTarget, coach: Bool)] = []
        for item in request.queryItems where item.name == "watch" || item.name == "coach" {
            let target: WatchTarget = item.value == "*" ? .everyone : .runner(item.value)
            if case .runner(let name) = target, !Command.isValidName(name) {
                write(.text(.badRequest, "bad runner name \(item.value): 1-32 of A-Z a-z 0-9 _ . -\n"), to: connection,
                      keepAlive: false, head: request.method == "HEAD")
                return
            }
            targets.append((target, item.name == "coach"))
        }
        guard !targets.isEmpty, targets.count <= configuration.maximumFollowedRunners else {
            write(.text(.badRequest, "give watch=NAME, watch=*, coach=NAME or coach=*\n"), to: connection, keepAlive: false,
                  head: request.method == "HEAD")
            return
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

        decide { $0.connected(connection.id, address: Self.address(of: connection), eventStream: true, now: now) }
        // `token`: a private runner's share link (the page passes on its own `?token=`). One that opens none of
        // the runners named counts toward the guessing limit, as on every other URL (a token that opens nobody was
        // counted as the request arrived).
        let token = WebRoute.shareToken(in: request)
        if let token, let opens = decide({ $0.liveShare(token, now: now) })?.runner {
            let named = targets.contains { target, _ in if case .runner(let name) = target { name == opens } else { false } }
            if !named { _ = wrongTokens.wrong(from: Self.address(of: connection), target: nil, now: now) }
        }
        for (target, coach) in targets {
            let named: String? = if case .runner = target { token } else { nil }
            decide { $0.received(coach ? .coach(target, token: named) : .watch(target, token: named), from: connection.id, now: now) }
        }
        let resumed = request.lastEventID.flatMap(UInt64.init).flatMap { after in
            decide { $0.missedEvents(after: after, for: targets.map(\.0), visibleTo: connection.id) }
        }
        if let resumed {
            // Reconnected in time: exactly what it missed, with the ids it would have had.
            // The catch-up lines the subscriptions made are older than what it missed: dropped.
            connection.stream?.held = []
            replaceHeld(connection, with: resumed.map { entry in
                (frame(entry.line, sequence: entry.sequence) ?? [], entry.role, false)
            })
            return
        }
        // A late joiner of one runner's live run gets the whole run so far first, made off the loop (when the
        // loop's reads are full, the live events alone: the page fills the track in as they come).
        guard !readsAreFull, case .runner(let name)? = targets.first(where: { !$0.coach }).map(\.0),
              hub.mayFollow(name, connection.id),
              let snapshot = hub.trackSnapshotSource(for: name) else {
            releaseHeld(connection)
            return
        }
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

    /// Frames a line for a stream (or holds it while the snapshot is made); false when nothing was conflated.
    /// The frame keeps the line's `role`: its text (`id: …`) no longer says which runner it is about.
    func deliverToStream(_ connection: HTTPConnection, _ line: [UInt8], as role: LineRole, sequence: UInt64?) -> Bool {
        guard var stream = connection.stream, let shared = sharedFrame(of: line, sequence: sequence) else { return false }
        if stream.held != nil {
            // Lines without a number are the subscriptions' catch-up (run, badges, latest pace).
            connection.stream?.held?.append((Array(shared.bytes), role, sequence == nil))
            if (connection.stream?.held?.count ?? 0) > Self.maximumHeldEvents {
                // Marked, not closed: this runs inside the hub's broadcast, which closing would re-enter
                // (`disconnected`); a doomed peer gets nothing more, and is closed at the end of the turn.
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
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let kind = String(decoding: line[..<colon], as: UTF8.self)
        guard Self.streamedKinds.contains(kind) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(line.count * 2)
        ServerSentEvent.append(id: sequence.map(String.init), event: kind, data: json(forLine: line), to: &bytes)
        return bytes
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
