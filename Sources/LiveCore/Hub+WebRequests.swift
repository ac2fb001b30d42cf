import HTTP
import RunStore
import WebAssets
import WebRoutes
import Wire

/// The URLs of protocol.md part 2, decided by the hub: pages, the web API, cheers, phone apps and the runner
/// page's actions. The driver decodes the request (``WebRoute``) and writes what the hub answers
/// (``HubEffect/respond(_:_:close:)`` and the other `respond` effects); what only the transport knows (event
/// streams, metrics, health) it serves itself.
extension Hub {
    /// What the driver serves itself, once the hub has checked the request's share token.
    package enum DriversRoute: Equatable {
        /// `GET /events`: the connection becomes an event stream.
        case events
        /// `GET /metrics`: the loop's counters.
        case metrics
        /// `GET /health`.
        case health
    }

    /// One HTTP request from connection `id` (at `address`): decided and answered through effects, or, for the
    /// driver's own routes, handed back. A private runner is shown only with a live share token of its own; a
    /// wrong token counts as a guess, and an address that guessed too much is refused (a right one is always
    /// taken).
    package func request(_ route: WebRoute, _ request: HTTPRequest, from id: ConnectionID, address: String,
                         now: Double) -> DriversRoute? {
        assertOnLoop()
        let token = WebRoute.shareToken(in: request)
        let share = token.flatMap { liveShare($0, now: now) }
        if token != nil, share == nil, wrongTokens.wrong(from: address, target: nil, now: now) == .refuse {
            effects.respond(id, Self.tooManyGuesses)  // kept alive, as before: the page may go on without a token
            return nil
        }
        func visible(_ name: String? = nil) -> Set<String> {
            guard let share, name == nil || share.runner == name else { return [] }
            return [share.runner]
        }
        switch route {
        case .events: return .events
        case .metrics: return .metrics
        case .health: return .health
        case .page(let asset):
            var response = HTTPResponse(status: .ok, body: asset.bytes)
            response.headers.set("Content-Type", asset.contentType)
            response.headers.set("Cache-Control", "no-cache")
            if asset.contentType.hasPrefix("text/html") {
                response.headers.set("Content-Security-Policy", WebPolicy.contentSecurityPolicy(for: configuration.streetMap))
            }
            effects.respond(id, response)
        case .cheer(let runner, let text):
            effects.respond(id, pageCheer(text, to: runner, visible: visible(runner), from: address, now: now))
        case .overview:
            effects.respond(id, .json(WebAPI.overviewJSON(overview())))
        case .badgeCatalogue:
            effects.respond(id, WebAPI.catalogue)
        case .mapSettings:
            effects.respond(id, WebAPI.mapSettings(configuration.streetMap))
        case .leaflet(let name):
            guard let file = configuration.streetMap.leaflet?.file(named: name) else {
                effects.respond(id, .text(.notFound, "no street map here: the server has no Leaflet (\(name))\n"))
                return nil
            }
            var response = HTTPResponse(status: .ok, body: file.bytes)
            response.headers.set("Content-Type", file.contentType)
            response.headers.set("Cache-Control", "max-age=86400")
            effects.respond(id, response)
        case .runner(let name):
            // A run on another loop of this server: answered there, where its course's passing times are.
            if isRemoteOnCourse(name), !ownsRunner(name) {
                effects.handOver(id, runner: name)
                return nil
            }
            let visible = visible(name), hidden = isPrivate(name) && !visible.contains(name)
            let known = isKnownAnywhere(name)
            let snapshot = hidden ? nil : trackSnapshotSource(for: name)
            let course = hidden ? nil : courseProgress(of: name)
            effects.respondFromStore(id) { store throws(StoreError) in
                try WebAPI.runner(name, known: known && !hidden, snapshot: snapshot, course: course, visible: visible,
                                  store: store)
            }
        case .course(let name):
            // A course no runner on this loop asked for is read from the store (and built) off the loop; its
            // runners (on any loop) are known from their paces.
            let known = course(named: name), runners = runners(onCourse: name)
            effects.respondFromStore(id) { store throws(StoreError) in
                try WebAPI.course(name, known: known, runners: runners, store: store)
            }
        case .badgeBoard(let name):
            let visible = visible(name)
            let live = isPrivate(name) && !visible.contains(name) ? nil
                : standing(of: name).map { WebAPI.LiveRunner(history: $0.history, distance: $0.distance) }
            effects.respondFromStore(id) { store throws(StoreError) in
                try WebAPI.badges(name, live: live, visible: visible, store: store)
            }
        case .runs(let name, let offset, let limit):
            let visible = visible(name), live = liveRun(of: name)
            effects.respondFromStore(id) { store throws(StoreError) in
                try WebAPI.runs(name, offset: offset, limit: limit, live: live, visible: visible, store: store)
            }
        case .run(let runID):
            let visible = visible(), tracker = configuration.tracker
            effects.respondFromStore(id) { store throws(StoreError) in
                try WebAPI.run(runID, visible: visible, store: store, tracker: tracker)
            }
        case .export(let runID, let format):
            let visible = visible(), tracker = configuration.tracker
            effects.respondFromStore(id) { store throws(StoreError) in
                try WebAPI.export(runID, format: format, visible: visible, store: store, tracker: tracker)
            }
        case .osmAnd:
            phoneRequest(request, format: .osmAnd, from: id, address: address, now: now)
        case .ownTracks:
            phoneRequest(request, format: .ownTracks, from: id, address: address, now: now)
        case .runnerAction(let runner, .devices):
            addDeviceFromPage(request, runner: runner, from: id, address: address, now: now)
        case .runnerAction(let runner, .stop):
            stopRunFromPage(request, runner: runner, from: id, address: address, now: now)
        case .runnerAction(let runner, .course):
            setCourseFromPage(request, runner: runner, from: id, address: address, now: now)
        case .deviceList(let runner):
            listDevices(request, runner: runner, from: id, address: address, now: now)
        }
        return nil
    }

    /// A cheer from the page (its text already checked by the rules of `msg:`): 202 once relayed.
    private func pageCheer(_ text: String, to runner: String, visible: Set<String>, from address: String,
                           now: Double) -> HTTPResponse {
        guard liveRun(of: runner) != nil, !isPrivate(runner) || visible.contains(runner) else {
            return .text(.notFound, "\(runner) is not running now")
        }
        if let refusal = admitPageCheer(from: address, to: runner, now: now) {
            var response = HTTPResponse.text(.tooManyRequests, refusal + "\n")
            response.headers.set("Retry-After", "1")
            return response
        }
        relayCheer(to: runner, from: "anon", text: text)
        return .text(.accepted, "accepted")
    }

    /// Answers a request that brought a wrong key or token tried for `target` (nil: a token naming nobody):
    /// `response` now or after the limiter's delay, or 429 (and the connection closed) when the source address
    /// is refused. Only ever after the key or token was checked, so a right one is accepted whatever a guesser
    /// behind the same address (a venue's Wi-Fi, a carrier's NAT) has done.
    func answerWrongGuess(_ response: HTTPResponse, to id: ConnectionID, address: String, target: String?, now: Double) {
        switch wrongTokens.wrong(from: address, target: target, now: now) {
        case .answer: effects.respond(id, response)
        case .slow(let seconds): effects.respondLater(id, response, after: seconds)
        case .refuse: effects.respond(id, Self.tooManyGuesses, close: true)
        }
    }

    /// 429 for an address that gave five times the limit of wrong keys and tokens this minute.
    package static let tooManyGuesses = HTTPResponse.text(.tooManyRequests, "too many wrong keys or tokens: wait a minute\n")
}
