import HTTP
import RunStore
import Wire

/// `/osmand` and `/owntracks`: phone apps posting one position per request. A position is answered 200 only
/// once the store committed it (as `ack:` is), so the app's own retry queue and the store lose nothing
/// between them; a position the filter refuses is answered at once (retrying would not help).
extension Server {
    /// One app's answer waiting for a commit.
    struct PendingDeviceAnswer {
        let connection: ConnectionID
        let timestamp: Double
        let keepAlive: Bool
        let isOwnTracks: Bool
    }

    /// The apps' formats.
    enum DeviceFormat {
        case osmAnd
        case ownTracks
    }

    /// Reads a position, puts it through the runner's run, and answers now or after the commit.
    func receiveDevicePosition(_ request: HTTPRequest, on connection: HTTPConnection, format: DeviceFormat, now: Double) {
        let address = Self.address(of: connection)
        if wrongTokens.isLimited(address, now: now) {
            return write(.text(HTTPStatus(429, "Too Many Requests"), "too many wrong device tokens: wait a minute\n"),
                         to: connection, keepAlive: false)
        }
        let report: DeviceReport
        do throws(DeviceReport.Problem) {
            report = format == .osmAnd ? try DeviceReport.osmAnd(request) : try DeviceReport.ownTracks(request)
        } catch {
            switch error {
            case .ignored: return write(.json(Array("[]\n".utf8)), to: connection, keepAlive: request.keepAlive)
            case .encrypted(let token, _):
                if let token { hub.deviceSentEncrypted(token: token, now: now) }
                return write(.json(Array("[]\n".utf8)), to: connection, keepAlive: request.keepAlive)
            case .malformed(let reason): return write(.text(.badRequest, reason), to: connection, keepAlive: request.keepAlive)
            }
        }
        if let name = hub.runnerName(forDeviceToken: report.token), let owner = otherOwner(of: name) {
            // The runner's run is on another loop: the app's connection goes there, with this request.
            return move(connection, to: owner, .http(parser: connection.parser, idleSince: connection.idleSince,
                                                     request: request))
        }
        guard let entry = hub.runner(forDeviceToken: report.token), report.user.map({ $0 == entry.name }) ?? true else {
            countDeviceFailure(from: address, now: now)
            return write(.text(.forbidden, "unknown device token: get one with device: (see README)\n"), to: connection,
                         keepAlive: request.keepAlive)
        }
        let answered = HTTPResponse.json(Array((format == .ownTracks ? "[]\n" : "{}\n").utf8))
        switch hub.placeDeviceFix(report.location, for: entry, now: now) {
        case .rejected, .resent(stored: true):
            write(answered, to: connection, keepAlive: request.keepAlive)
        case .failed:
            write(.text(.serviceUnavailable, "storage is failing: send it again later\n"), to: connection,
                  keepAlive: request.keepAlive)
        case .recorded, .resent(stored: false):
            guard let runID = entry.run?.id else { return write(answered, to: connection, keepAlive: request.keepAlive) }
            connection.isAwaitingResponse = true
            pendingDeviceAnswers[runID, default: []].append(PendingDeviceAnswer(
                connection: connection.id, timestamp: report.location.timestamp, keepAlive: request.keepAlive,
                isOwnTracks: format == .ownTracks))
        }
    }

    /// `POST /runners/NAME/devices` and `POST /runners/NAME/stop`, for the runner's page: the key comes as
    /// `Authorization: Bearer KEY` or a form field `key`. A wrong key counts as a wrong token.
    func respondToRunnerAction(_ request: HTTPRequest, runner name: String, action: String, on connection: HTTPConnection,
                               now: Double) {
        if let owner = otherOwner(of: name) {
            return move(connection, to: owner, .http(parser: connection.parser, idleSince: connection.idleSince,
                                                     request: request))
        }
        let address = Self.address(of: connection)
        if wrongTokens.isLimited(address, now: now) {
            return write(.text(HTTPStatus(429, "Too Many Requests"), "too many wrong keys: wait a minute\n"),
                         to: connection, keepAlive: false)
        }
        var key = request.headers["Authorization"].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        if key == nil, let form = try? request.formItems() { key = form.first { $0.name == "key" }?.value }
        let wrong = HTTPResponse.text(.forbidden, "unknown runner or wrong key\n")
        guard let key else { return write(wrong, to: connection, keepAlive: request.keepAlive) }
        if action == "devices" {
            guard let token = hub.addDevice(runner: name, key: key, now: now) else {
                countDeviceFailure(from: address, now: now)
                return write(wrong, to: connection, keepAlive: request.keepAlive)
            }
            write(.json(Array(#"{"token":"\#(token)"}"#.utf8), status: HTTPStatus(201, "Created")), to: connection,
                  keepAlive: request.keepAlive)
        } else {
            switch hub.stopRun(runner: name, key: key, now: now) {
            case nil:
                countDeviceFailure(from: address, now: now)
                write(wrong, to: connection, keepAlive: request.keepAlive)
            case .some(nil):
                write(.text(HTTPStatus(409, "Conflict"), "\(name) has no run in progress\n"), to: connection,
                      keepAlive: request.keepAlive)
            case .some(let runID?):
                write(.json(Array(#"{"run":\#(runID)}"#.utf8)), to: connection, keepAlive: request.keepAlive)
            }
        }
    }

    /// A batch reached the disk (or failed): the apps whose positions it covers get their answer.
    func answerDevices(after receipt: CommitReceipt) {
        guard !pendingDeviceAnswers.isEmpty else { return }
        for (runID, text) in receipt.acknowledgements {
            guard let waiting = pendingDeviceAnswers[runID], let acknowledged = Double(text) else { continue }
            let (done, left) = (waiting.filter { $0.timestamp <= acknowledged }, waiting.filter { $0.timestamp > acknowledged })
            pendingDeviceAnswers[runID] = left.isEmpty ? nil : left
            for answer in done { finish(answer, with: .json(Array((answer.isOwnTracks ? "[]\n" : "{}\n").utf8))) }
        }
        for runID in receipt.affectedRuns {
            guard let waiting = pendingDeviceAnswers.removeValue(forKey: runID) else { continue }
            for answer in waiting { finish(answer, with: .text(.serviceUnavailable, "storage is failing: send it again later\n")) }
        }
    }

    private func finish(_ answer: PendingDeviceAnswer, with response: HTTPResponse) {
        guard let connection = connections[answer.connection] as? HTTPConnection else { return }
        connection.isAwaitingResponse = false
        write(response, to: connection, keepAlive: answer.keepAlive)
        if connection.hasPeerClosed { closeAfterOutput(connection, reason: "closed by peer") }
        answerRequests(connection, now: Self.now())
    }

    private func countDeviceFailure(from address: String, now: Double) {
        wrongTokens.count(address, now: now)
    }

    /// The peer's address without its port, for per-address limits.
    static func address(of connection: Peer) -> String {
        let description = connection.socket.peerDescription
        guard let colon = description.lastIndex(of: ":") else { return description }
        return String(description[..<colon])
    }
}
