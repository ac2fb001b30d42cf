import HTTP
import Wire

/// `/osmand` and `/owntracks`: phone apps posting positions, one per request or a batch. The request is decoded
/// (``DeviceReport``) and its token checked here; the positions go through ``phonePositions(_:token:app:for:from:now:)``,
/// which answers at once or once they are on disk.
extension Hub {
    /// The apps' formats.
    package enum PhoneFormat: Equatable, Sendable {
        case osmAnd
        case ownTracks
    }

    /// One phone app's request of positions from connection `id`.
    func phoneRequest(_ request: HTTPRequest, format: PhoneFormat, from id: ConnectionID, address: String, now: Double) {
        let report: DeviceReport
        do throws(DeviceReport.Problem) {
            report = format == .osmAnd ? try DeviceReport.osmAnd(request, now: now) : try DeviceReport.ownTracks(request, now: now)
        } catch {
            switch error {
            case .ignored:
                effects.respond(id, .json(Array("[]\n".utf8)))
            case .encrypted(let token, _):
                if let token, let name = runnerName(forDeviceToken: token), !ownsRunner(name) {
                    return effects.handOver(id, runner: name)
                }
                if let token { deviceSentEncrypted(token: token, now: now) }
                effects.respond(id, .json(Array("[]\n".utf8)))
            case .malformed(let reason):
                effects.respond(id, .text(.badRequest, reason))
            }
            return
        }
        if let name = runnerName(forDeviceToken: report.token), !ownsRunner(name) {
            // The runner's run is on another loop: the app's connection goes there, with this request.
            return effects.handOver(id, runner: name)
        }
        guard let entry = runner(forDeviceToken: report.token) else {
            return answerWrongGuess(.text(.forbidden, "unknown device token: get one with device: (see README)\n"),
                                    to: id, address: address, target: report.user, now: now)
        }
        guard report.user.map({ $0 == entry.name }) ?? true else {
            // OwnTracks' user must be the token's runner: said plainly, as the token itself is right.
            return answerWrongGuess(
                .text(.forbidden, "the user is not this device token's runner: set the runner's name as the user\n"),
                to: id, address: address, target: report.user, now: now)
        }
        phonePositions(report.positions, token: report.token, app: report.app, for: entry, from: id, now: now,
                       format: format)
    }
}

extension PhoneAnswer {
    /// What the app gets: for positions taken, OwnTracks expects a JSON array (of messages for it), OsmAnd an
    /// object; 503 when storing failed, so the app sends them all again.
    package func response(for format: Hub.PhoneFormat) -> HTTPResponse {
        switch self {
        case .taken: .json(Array((format == .ownTracks ? "[]\n" : "{}\n").utf8))
        case .storageFailing: .text(.serviceUnavailable, "storage is failing: send it again later\n")
        }
    }
}
