import HTTP
import WebRoutes
import Wire

/// `GET /events`: a browser's stream of events is a spectator (or coach) like a TCP one, a session with the
/// same subscriptions. The hub decides what the stream follows and how it starts (exactly what it missed, the
/// run so far, or live events only); the driver writes the head and frames the events (``EventStreamFrame``).
extension Hub {
    /// How a stream starts, once its subscriptions are made.
    package enum StreamStart {
        /// A reconnect in time (`Last-Event-ID`): exactly the events it missed, with the ids it would have had;
        /// the catch-up lines its subscriptions made are older than these and are dropped.
        case missed([EventBacklog.Entry])
        /// A late joiner of one runner's live run: the run so far (read off the loop), then only what happened
        /// since (the catch-up lines say nothing the track does not).
        case snapshot(TrackSnapshot)
        /// Live events from now, after the catch-up lines.
        case live
    }

    /// What a stream request follows, or its refusal.
    package enum StreamTargets {
        case follow([(WatchTarget, coach: Bool)])
        case refuse(HTTPResponse)
    }

    /// What a stream request follows (`watch=NAME|*`, `coach=NAME|*`, several at most
    /// ``ServerConfiguration/maximumFollowedRunners``), or the 400 a bad one gets. Decides nothing.
    package func streamTargets(of request: HTTPRequest) -> StreamTargets {
        var targets: [(WatchTarget, coach: Bool)] = []
        for item in request.queryItems where item.name == "watch" || item.name == "coach" {
            let target: WatchTarget = item.value == "*" ? .everyone : .runner(item.value)
            if case .runner(let name) = target, !Command.isValidName(name) {
                return .refuse(.text(.badRequest, "bad runner name \(item.value): 1-32 of A-Z a-z 0-9 _ . -\n"))
            }
            targets.append((target, item.name == "coach"))
        }
        guard !targets.isEmpty, targets.count <= configuration.maximumFollowedRunners else {
            return .refuse(.text(.badRequest, "give watch=NAME, watch=*, coach=NAME or coach=*\n"))
        }
        return .follow(targets)
    }

    /// Connection `id` (at `address`) becomes an event stream following `targets`: a session, its
    /// subscriptions (their catch-up lines sent to it as to any spectator), and how it starts. `token`: a
    /// private runner's share link (the page passes on its own `?token=`); one that opens none of the runners
    /// named counts toward the guessing limit, as on every other URL (a token that opens nobody was counted as
    /// the request arrived). `mayRead`: false while the driver's store reads are full (a late joiner then gets
    /// the live events alone: the page fills the track in as they come).
    package func openStream(_ id: ConnectionID, following targets: [(WatchTarget, coach: Bool)], token: String?,
                            lastEventID: UInt64?, address: String, mayRead: Bool, now: Double) -> StreamStart {
        connected(id, address: address, eventStream: true, now: now)
        if let token, let opens = liveShare(token, now: now)?.runner {
            let named = targets.contains { target, _ in if case .runner(let name) = target { name == opens } else { false } }
            if !named { _ = wrongTokens.wrong(from: address, target: nil, now: now) }
        }
        for (target, coach) in targets {
            let named: String? = if case .runner = target { token } else { nil }
            received(coach ? .coach(target, token: named) : .watch(target, token: named), from: id, now: now)
        }
        if let after = lastEventID, let missed = missedEvents(after: after, for: targets.map(\.0), visibleTo: id) {
            return .missed(missed)
        }
        guard mayRead, case .runner(let name)? = targets.first(where: { !$0.coach }).map(\.0), mayFollow(name, id),
              let snapshot = trackSnapshotSource(for: name) else { return .live }
        return .snapshot(snapshot)
    }
}

/// An event as a stream carries it: `id:` (the broadcast's number), `event:` (its kind) and `data:` (its JSON).
package enum EventStreamFrame {
    /// The event kinds a stream carries: a runner's broadcasts, not replies to commands it never sent.
    package static let streamedKinds: Set<String> = ["run", "pace", "split", "badge", "end", "msg", "rank", "alert",
                                                     "dropped", "point"]

    /// The kind of an event line, when a stream carries it.
    package static func streamedKind(of line: [UInt8]) -> String? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let kind = String(decoding: line[..<colon], as: UTF8.self)
        return streamedKinds.contains(kind) ? kind : nil
    }

    /// The frame of event line `line` (numbered `sequence`, nil for a catch-up line) whose JSON is `json`; nil
    /// for the kinds a stream does not carry.
    package static func frame(_ line: [UInt8], sequence: UInt64?, json: @autoclosure () -> [UInt8]) -> [UInt8]? {
        guard let kind = streamedKind(of: line) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(line.count * 2)
        ServerSentEvent.append(id: sequence.map(String.init), event: kind, data: json(), to: &bytes)
        return bytes
    }
}
