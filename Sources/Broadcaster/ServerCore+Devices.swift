import LiveCore
import HTTP
import RunStore
import Wire

/// `/osmand` and `/owntracks`: phone apps posting positions, one per request or a batch. The request is
/// decoded here (``DeviceReport``) and its token checked; the hub takes the positions and decides the answer
/// (``PhoneAnswer``), at once or once they are on disk.
extension ServerCore {
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
        connection.isAwaitingResponse = true
        connection.phoneRequest = (request.keepAlive, format == .ownTracks, true)
        decide { $0.phonePositions(report.positions, token: report.token, app: report.app, for: entry, from: connection.id,
                                   now: now) }
        connection.phoneRequest?.isDeciding = false
    }

    /// The hub's answer to a phone app's request: written at once when it came while the hub took the request;
    /// later (once its positions are on disk) the connection's next requests go on too, after the effects being
    /// carried out (never from inside them).
    func answerPhone(_ id: ConnectionID, _ answer: PhoneAnswer) {
        guard let connection = connections[id] as? HTTPConnection, let request = connection.phoneRequest else { return }
        connection.phoneRequest = nil
        let response = answer == .taken ? Self.deviceAnswer(request.isOwnTracks)
            : .text(.serviceUnavailable, "storage is failing: send it again later\n")
        guard request.isDeciding else { return resumeAfterEffects.append((id, response, request.keepAlive)) }
        connection.isAwaitingResponse = false
        write(response, to: connection, keepAlive: request.keepAlive)
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
