import LiveCore
import HTTP
import RunStore
import Wire

/// `/osmand` and `/owntracks`: phone apps posting positions, one per request or a batch. A request is answered
/// 200 only once the store committed every position in it (as `ack:` is), so the app's own retry queue and the
/// store lose nothing between them; a request whose positions were all refused before a run started is answered
/// at once (retrying would not help).
extension ServerCore {
    /// One app's answer waiting for a commit: the run's fix `sequence` (its request's highest) must be on disk.
    struct PendingDeviceAnswer {
        let connection: ConnectionID
        let sequence: Int64
        let keepAlive: Bool
        let isOwnTracks: Bool
    }

    /// The apps' formats.
    enum DeviceFormat {
        case osmAnd
        case ownTracks
    }

    /// Reads a request's positions, puts them through the runner's run, and answers now or after the commit.
    func receiveDevicePosition(_ request: HTTPRequest, on connection: HTTPConnection, format: DeviceFormat, now: Double) {
        let report: DeviceReport
        do throws(DeviceReport.Problem) {
            report = format == .osmAnd ? try DeviceReport.osmAnd(request, now: now)
                : try DeviceReport.ownTracks(request, now: now)
        } catch {
            switch error {
            case .ignored: return write(.json(Array("[]\n".utf8)), to: connection, keepAlive: request.keepAlive)
            case .encrypted(let token, _):
                if let token, let name = hub.runnerName(forDeviceToken: token), let owner = otherOwner(of: name) {
                    return move(connection, to: owner, .http(parser: connection.parser, idleSince: connection.idleSince,
                                                             request: request))
                }
                if let token { decide { $0.deviceSentEncrypted(token: token, now: now) } }
                return write(.json(Array("[]\n".utf8)), to: connection, keepAlive: request.keepAlive)
            case .malformed(let reason): return write(.text(.badRequest, reason), to: connection, keepAlive: request.keepAlive)
            }
        }
        if let name = hub.runnerName(forDeviceToken: report.token), let owner = otherOwner(of: name) {
            // The runner's run is on another loop: the app's connection goes there, with this request.
            return move(connection, to: owner, .http(parser: connection.parser, idleSince: connection.idleSince,
                                                     request: request))
        }
        guard let entry = hub.runner(forDeviceToken: report.token) else {
            return answerWrongGuess(.text(.forbidden, "unknown device token: get one with device: (see README)\n"),
                                    to: connection, keepAlive: request.keepAlive, target: report.user, now: now)
        }
        guard report.user.map({ $0 == entry.name }) ?? true else {
            // OwnTracks' user must be the token's runner: said plainly, as the token itself is right.
            return answerWrongGuess(
                .text(.forbidden, "the user is not this device token's runner: set the runner's name as the user\n"),
                to: connection, keepAlive: request.keepAlive, target: report.user, now: now)
        }
        let battery = report.positions.filter { $0.battery != nil }.max { $0.location.timestamp < $1.location.timestamp }
        decide { $0.deviceReported(token: report.token, runner: entry.name, app: report.app, battery: battery?.battery, now: now) }
        // An alarm first: an SOS is never held behind the positions it came with.
        for position in report.positions {
            if let alarm = position.alarm { decide { $0.raiseAlarm(alarm, at: position.location, for: entry, now: now) } }
        }
        let placements = decide { $0.placeDevicePositions(report.positions.map(\.location), for: entry, now: now) }
        if let battery, let level = battery.battery {
            decide { $0.noteBattery(level, at: battery.location.timestamp, for: entry, now: now) }
        }
        let isOwnTracks = format == .ownTracks
        if placements.contains(.failed) {
            return write(.text(.serviceUnavailable, "storage is failing: send it again later\n"), to: connection,
                         keepAlive: request.keepAlive)
        }
        var waiting: (runID: Int64, sequence: Int64)?
        for case .recorded(let runID, let sequence) in placements where sequence > waiting?.sequence ?? 0 {
            waiting = (runID, sequence)
        }
        guard let waiting, waiting.sequence > hub.committedSequence(ofRun: waiting.runID) ?? .max else {
            return write(Self.deviceAnswer(isOwnTracks), to: connection, keepAlive: request.keepAlive)
        }
        connection.isAwaitingResponse = true
        pendingDeviceAnswers[waiting.runID, default: []].append(PendingDeviceAnswer(
            connection: connection.id, sequence: waiting.sequence, keepAlive: request.keepAlive, isOwnTracks: isOwnTracks))
    }

    /// What an app gets for positions taken: OwnTracks expects a JSON array (of messages for it), OsmAnd an object.
    static func deviceAnswer(_ isOwnTracks: Bool) -> HTTPResponse {
        .json(Array((isOwnTracks ? "[]\n" : "{}\n").utf8))
    }

    /// `POST /runners/NAME/stop`, the runner's page's stop button (the key as for its phones): 200 `{"run":ID}`,
    /// 409 without a live run, 403 for an unknown runner or a wrong key.
    func stopRunFromPage(_ request: HTTPRequest, runner name: String, on connection: HTTPConnection, now: Double) {
        guard provedOnOwnLoop(request, runner: name, form: (try? request.formItems()) ?? [], on: connection, now: now)
        else { return }
        guard let runID = decide({ $0.stopRun(runner: name, now: now) }) else {
            return write(.text(HTTPStatus(409, "Conflict"), "\(name) has no run in progress\n"), to: connection,
                         keepAlive: request.keepAlive)
        }
        respondOnceStored(.json(Array(#"{"run":\#(runID)}"#.utf8)), to: connection, keepAlive: request.keepAlive)
    }

    /// A batch reached the disk (or failed): the apps whose positions it covers get their answer.
    func answerDevices(after receipt: CommitReceipt) {
        guard !pendingDeviceAnswers.isEmpty else { return }
        // A failure first: a request with a write that was not stored is never answered 200 (the app sends it
        // again, and what was stored is recognised).
        for runID in receipt.affectedRuns {
            guard let waiting = pendingDeviceAnswers.removeValue(forKey: runID) else { continue }
            for answer in waiting { finish(answer, with: .text(.serviceUnavailable, "storage is failing: send it again later\n")) }
        }
        for (runID, committed) in receipt.committedSequences {
            guard let waiting = pendingDeviceAnswers[runID] else { continue }
            let (done, left) = (waiting.filter { $0.sequence <= committed }, waiting.filter { $0.sequence > committed })
            pendingDeviceAnswers[runID] = left.isEmpty ? nil : left
            for answer in done { finish(answer, with: Self.deviceAnswer(answer.isOwnTracks)) }
        }
    }

    private func finish(_ answer: PendingDeviceAnswer, with response: HTTPResponse) {
        resume(answer.connection, with: response, keepAlive: answer.keepAlive)
    }

    /// Answers a request that says a change was stored (a device token made, a run stopped) once everything
    /// submitted so far is committed (503 only if the server stops first); the connection's next requests wait.
    func respondOnceStored(_ response: HTTPResponse, to connection: HTTPConnection, keepAlive: Bool) {
        connection.isAwaitingResponse = true
        let id = connection.id
        afterCommit { [unowned self] failure in
            resume(id, with: failure.map { .text(.serviceUnavailable, "\($0.message)\n") } ?? response,
                   keepAlive: keepAlive)
        }
    }

    /// A request's answer that waited (for a commit): written, then the connection's next requests.
    func resume(_ id: ConnectionID, with response: HTTPResponse, keepAlive: Bool) {
        guard let connection = connections[id] as? HTTPConnection else { return }
        connection.isAwaitingResponse = false
        write(response, to: connection, keepAlive: keepAlive)
        if connection.hasPeerClosed { closeAfterOutput(connection, reason: "closed by peer") }
        answerRequests(connection, now: Self.now())
    }

    /// The peer's address without its port, for per-address limits.
    static func address(of connection: Peer) -> String {
        let description = connection.socket.peerDescription
        guard let colon = description.lastIndex(of: ":") else { return description }
        return String(description[..<colon])
    }
}
