import LiveCore
import HTTP
import RunStore
import WebRoutes
import Wire

/// The URLs of protocol.md part 2, decoded by `WebRoute` and answered on the loop (pages, cheers, metrics,
/// phone apps) or off it (anything that reads the store).
extension ServerCore {
    /// Answers one request.
    func respond(to request: HTTPRequest, on connection: HTTPConnection, now: Double) {
        let head = request.method == "HEAD"
        func answer(_ response: HTTPResponse) {
            write(response, to: connection, keepAlive: request.keepAlive, head: head)
        }
        func fromStore(_ make: @escaping @Sendable (any RunStore) throws(StoreError) -> HTTPResponse) {
            respondFromStore(to: request, on: connection, make)
        }
        let route: WebRoute
        do throws(WebRouteError) {
            route = try WebRoute.resolve(request)
        } catch {
            return answer(error.response)
        }
        let tracker = configuration.tracker
        // A private runner is shown only with a live share token of its own. A wrong token counts as a guess, and
        // from an address that guessed too much is refused; a right one is always taken.
        let token = WebRoute.shareToken(in: request)
        let share = token.flatMap { token in decide { $0.liveShare(token, now: now) } }
        if token != nil, share == nil,
           wrongTokens.wrong(from: Self.address(of: connection), target: nil, now: now) == .refuse {
            return answer(Self.tooManyGuesses)
        }
        func visible(_ name: String? = nil) -> Set<String> {
            guard let share, name == nil || share.runner == name else { return [] }
            return [share.runner]
        }
        switch route {
        case .page(let asset):
            var response = HTTPResponse(status: .ok, body: asset.bytes)
            response.headers.set("Content-Type", asset.contentType)
            response.headers.set("Cache-Control", "no-cache")
            if asset.contentType.hasPrefix("text/html") {
                response.headers.set("Content-Security-Policy", Self.contentSecurityPolicy(for: configuration.streetMap))
            }
            answer(response)
        case .events:
            openEventStream(request, on: connection, now: now)
        case .cheer(let runner, let text):
            answer(cheer(text, to: runner, visible: visible(runner), from: Self.address(of: connection), now: now))
        case .overview:
            answer(.json(WebAPI.overviewJSON(hub.overview())))
        case .badgeCatalogue:
            answer(WebAPI.catalogue)
        case .mapSettings:
            answer(WebAPI.mapSettings(configuration.streetMap))
        case .leaflet(let name):
            guard let file = configuration.streetMap.leaflet?.file(named: name) else {
                return answer(.text(.notFound, "no street map here: the server has no Leaflet (\(name))\n"))
            }
            var response = HTTPResponse(status: .ok, body: file.bytes)
            response.headers.set("Content-Type", file.contentType)
            response.headers.set("Cache-Control", "max-age=86400")
            answer(response)
        case .runner(let name):
            // A run on another loop of this server: answered there, where its course's passing times are.
            if hub.isRemoteOnCourse(name), let owner = otherOwner(of: name) {
                return move(connection, to: owner, .http(parser: connection.parser, idleSince: connection.idleSince,
                                                         request: request))
            }
            let visible = visible(name), hidden = hub.isPrivate(name) && !visible.contains(name)
            let known = hub.isKnownAnywhere(name)
            let snapshot = hidden ? nil : hub.trackSnapshotSource(for: name)
            let course = hidden ? nil : hub.courseProgress(of: name)
            fromStore { store throws(StoreError) in
                try WebAPI.runner(name, known: known && !hidden, snapshot: snapshot, course: course, visible: visible,
                                  store: store)
            }
        case .course(let name):
            // A course no runner on this loop asked for is read from the store (and built) off the loop; its
            // runners (on any loop) are known from their paces.
            let known = hub.course(named: name), runners = hub.runners(onCourse: name)
            fromStore { store throws(StoreError) in
                try WebAPI.course(name, known: known, runners: runners, store: store)
            }
        case .badgeBoard(let name):
            let visible = visible(name), live = hub.isPrivate(name) && !visible.contains(name) ? nil : hub.standing(of: name).map { WebAPI.LiveRunner(history: $0.history, distance: $0.distance) }
            fromStore { store throws(StoreError) in try WebAPI.badges(name, live: live, visible: visible, store: store) }
        case .runs(let name, let offset, let limit):
            let visible = visible(name), live = hub.liveRun(of: name)
            fromStore { store throws(StoreError) in
                try WebAPI.runs(name, offset: offset, limit: limit, live: live, visible: visible, store: store)
            }
        case .run(let id):
            let visible = visible()
            fromStore { store throws(StoreError) in try WebAPI.run(id, visible: visible, store: store, tracker: tracker) }
        case .export(let id, let format):
            let visible = visible()
            fromStore { store throws(StoreError) in
                try WebAPI.export(id, format: format, visible: visible, store: store, tracker: tracker)
            }
        case .metrics:
            guard shard != nil else { return answer(metricsResponse(counters: statisticsCounters() + loopGauges())) }
            // With several loops the others' counters are asked for first; later requests wait meanwhile.
            connection.isAwaitingResponse = true
            let id = connection.id
            gatherCounters(statisticsCounters() + loopGauges()) { [unowned self] counters in
                guard let connection = connections[id] as? HTTPConnection else { return }
                connection.isAwaitingResponse = false
                write(metricsResponse(counters: counters), to: connection, keepAlive: request.keepAlive, head: head)
                answerRequests(connection, now: Self.now())
            }
        case .health:
            answer(healthResponse(now: now))
        case .osmAnd:
            receiveDevicePosition(request, on: connection, format: .osmAnd, now: now)
        case .ownTracks:
            receiveDevicePosition(request, on: connection, format: .ownTracks, now: now)
        case .runnerAction(let runner, .devices):
            addDeviceFromPage(request, runner: runner, on: connection, now: now)
        case .runnerAction(let runner, .stop):
            stopRunFromPage(request, runner: runner, on: connection, now: now)
        case .runnerAction(let runner, .course):
            setCourseFromPage(request, runner: runner, on: connection, now: now)
        case .deviceList(let runner):
            listDevices(request, runner: runner, on: connection, now: now)
        }
    }

    /// A cheer from the page (its text already checked by the rules of `msg:`): 202 once relayed.
    private func cheer(_ text: String, to runner: String, visible: Set<String>, from address: String,
                       now: Double) -> HTTPResponse {
        guard hub.liveRun(of: runner) != nil, !hub.isPrivate(runner) || visible.contains(runner) else {
            return .text(.notFound, "\(runner) is not running now")
        }
        if let refusal = decide({ $0.admitPageCheer(from: address, to: runner, now: now) }) {
            var response = HTTPResponse.text(.tooManyRequests, refusal + "\n")
            response.headers.set("Retry-After", "1")
            return response
        }
        decide { $0.relayCheer(to: runner, from: "anon", text: text) }
        return .text(.accepted, "accepted")
    }
}
