import HTTP
import RunStore
import WebAssets
import Wire

/// The URLs of protocol.md part 2, answered on the loop (pages, cheers, metrics) or off it (anything that
/// reads the store).
extension Server {
    /// Answers one request.
    func respond(to request: HTTPRequest, on connection: HTTPConnection, now: Double) {
        let segments = request.pathSegments
        let isRead = request.method == "GET" || request.method == "HEAD"
        func refuse(_ allowed: String) {
            var response = HTTPResponse.text(.methodNotAllowed, "\(request.method) is not allowed here: use \(allowed)\n")
            response.headers.set("Allow", allowed)
            write(response, to: connection, keepAlive: request.keepAlive)
        }
        func answer(_ response: HTTPResponse) {
            write(response, to: connection, keepAlive: request.keepAlive, head: request.method == "HEAD")
        }
        // Names and ids in paths are checked before anything reads the store.
        if segments.count >= 2, segments[0] == "runners" || (segments[0] == "api" && segments.count >= 3
            && segments[1] == "runners") {
            let name = segments[0] == "runners" ? segments[1] : segments[2]
            guard Command.isValidName(name) else {
                answer(.text(.notFound, "no runner \(name)\n"))
                return
            }
        }
        switch (segments.first, segments.count) {
        case ("runners", 3) where segments[2] == "devices" || segments[2] == "stop":
            guard request.method == "POST" else { return refuse("POST") }
            respondToRunnerAction(request, runner: segments[1], action: segments[2], on: connection, now: now)
        case ("runners", 3) where segments[2] == "cheers":
            guard request.method == "POST" else { return refuse("POST") }
            answer(cheer(request, to: segments[1]))
        case ("osmand", 1):
            guard request.method == "GET" || request.method == "POST" else { return refuse("GET, POST") }
            receiveDevicePosition(request, on: connection, format: .osmAnd, now: now)
        case ("owntracks", 1):
            guard request.method == "POST" else { return refuse("POST") }
            receiveDevicePosition(request, on: connection, format: .ownTracks, now: now)
        case ("events", 1):
            guard isRead else { return refuse("GET") }
            openEventStream(request, on: connection, now: now)
        case ("healthz", 1):
            guard isRead else { return refuse("GET, HEAD") }
            answer(healthResponse(now: now))
        case ("metrics", 1):
            guard isRead else { return refuse("GET, HEAD") }
            answer(metricsResponse())
        case ("api", _):
            guard isRead else { return refuse("GET, HEAD") }
            respondToAPI(request, segments: Array(segments.dropFirst()), on: connection)
        case ("runs", 2) where segments[1].contains("."):
            guard isRead else { return refuse("GET, HEAD") }
            let parts = segments[1].split(separator: ".", maxSplits: 1).map(String.init)
            guard parts.count == 2, let id = Int64(parts[0]), id > 0, ["gpx", "geojson", "svg"].contains(parts[1]) else {
                return answer(.text(.notFound, "no such export: /runs/ID.gpx, .geojson or .svg\n"))
            }
            respondFromStore(to: request, on: connection) { store throws(StoreError) in
                try WebAPI.export(id, format: parts[1], store: store)
            }
        default:
            guard let page = WebAssets.page(forPathSegments: segments) else {
                return answer(.text(.notFound, "nothing at \(request.path)\n"))
            }
            guard isRead else { return refuse("GET, HEAD") }
            var response = HTTPResponse(status: .ok, body: page.bytes)
            response.headers.set("Content-Type", page.contentType)
            answer(response)
        }
    }

    /// `/api/…`.
    private func respondToAPI(_ request: HTTPRequest, segments: [String], on connection: HTTPConnection) {
        let tracker = configuration.tracker
        switch (segments.first, segments.count) {
        case ("badges", 1):
            write(WebAPI.catalogue, to: connection, keepAlive: request.keepAlive, head: request.method == "HEAD")
        case ("overview", 1):
            let overview = hub.overviewJSON()
            write(.json(overview), to: connection, keepAlive: request.keepAlive, head: request.method == "HEAD")
        case ("runners", 2):
            let live = hub.liveRunner(segments[1])
            respondFromStore(to: request, on: connection) { store throws(StoreError) in
                try WebAPI.runner(segments[1], live: live, store: store)
            }
        case ("runners", 3) where segments[2] == "badges":
            let live = hub.liveRunner(segments[1])
            respondFromStore(to: request, on: connection) { store throws(StoreError) in
                try WebAPI.badges(segments[1], live: live, store: store)
            }
        case ("runners", 3) where segments[2] == "runs":
            let offset = request.query("offset").map { Int($0) ?? -1 } ?? 0
            let limit = request.query("limit").map { Int($0) ?? -1 } ?? Command.Limits.defaultRunsLimit
            guard offset >= 0, (1...configuration.maximumHistoryPage).contains(limit) else {
                return write(.text(.badRequest, "offset is 0 or more, limit 1-\(configuration.maximumHistoryPage)\n"),
                             to: connection, keepAlive: request.keepAlive)
            }
            respondFromStore(to: request, on: connection) { store throws(StoreError) in
                try WebAPI.runs(segments[1], offset: offset, limit: limit, store: store)
            }
        case ("runs", 2):
            guard let id = Int64(segments[1]), id > 0 else {
                return write(.text(.notFound, "no run \(segments[1])\n"), to: connection, keepAlive: request.keepAlive)
            }
            respondFromStore(to: request, on: connection) { store throws(StoreError) in
                try WebAPI.run(id, store: store, tracker: tracker)
            }
        default:
            write(.text(.notFound, "nothing at \(request.path)\n"), to: connection, keepAlive: request.keepAlive)
        }
    }

    /// `POST /runners/NAME/cheers`: the body is the text (plain, or form-encoded `text=…`). 202 once relayed.
    private func cheer(_ request: HTTPRequest, to runner: String) -> HTTPResponse {
        var text = request.bodyText ?? ""
        if request.mediaType == "application/x-www-form-urlencoded" {
            guard let items = try? request.formItems() else { return .text(.badRequest, "malformed form body\n") }
            text = items.first { $0.name == "text" }?.value ?? ""
        }
        // The line protocol's own rules for a cheer (1-280 characters, no controls), through its own parser.
        guard !text.contains("\n"), case .cheer(let valid)? = try? Command.parse(Array(("msg:" + text).utf8)) else {
            return .text(.badRequest, "a cheer is 1-\(Command.Limits.cheerLength) characters without control characters\n")
        }
        guard hub.runners[runner]?.run?.id != nil else { return .text(.notFound, "\(runner) is not running now\n") }
        hub.relayCheer(to: runner, from: "web", text: valid)
        return .text(.accepted, "cheer sent to \(runner)\n")
    }
}
