import HTTP
import WebAssets
import Wire

extension WebRoute {
    static let readMethods = ["GET", "HEAD"]
    static let knownMethods = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE"]

    /// The route of a parsed request, or the error to answer (404 unknown path, 405 wrong method with
    /// `Allow`, 400 bad query, 415/422 bad cheer, 501 unknown method). `HEAD` routes like `GET`; the
    /// server sends no body for it.
    public static func resolve(_ request: HTTPRequest) throws(WebRouteError) -> WebRoute {
        guard knownMethods.contains(request.method) else {
            throw WebRouteError(.notImplemented, "method \(request.method) is not implemented")
        }
        let segments = request.pathSegments
        if segments.count == 3, segments[0] == "runners", segments[2] == "cheers" {
            try require(request, ["POST"])
            return try cheer(to: segments[1], request)
        }
        if segments.count == 3, segments[0] == "runners", let action = RunnerAction(rawValue: segments[2]) {
            if action == .devices, request.method == "GET" { return .deviceList(runner: try requireName(segments[1])) }
            try require(request, action == .devices ? ["GET", "POST"] : ["POST"])
            return .runnerAction(runner: try requireName(segments[1]), action: action)
        }
        if segments == ["osmand"] {
            try require(request, ["GET", "POST"])
            return .osmAnd
        }
        if segments == ["owntracks"] {
            try require(request, ["POST"])
            return .ownTracks
        }
        let route = try readRoute(segments, request)
        try require(request, readMethods)
        return route
    }

    static func require(_ request: HTTPRequest, _ methods: [String]) throws(WebRouteError) {
        guard methods.contains(request.method) else {
            throw WebRouteError(.methodNotAllowed, "\(request.path) takes \(methods.joined(separator: " or "))",
                                allowed: methods)
        }
    }

    static func readRoute(_ segments: [String], _ request: HTTPRequest) throws(WebRouteError) -> WebRoute {
        switch segments.first {
        case "events" where segments.count == 1:
            return .events(try streamTarget(request))
        case "metrics" where segments.count == 1:
            return .metrics
        case "healthz" where segments.count == 1:
            return .health
        case "api":
            return try apiRoute(Array(segments.dropFirst()), request)
        case "runs" where segments.count == 2:
            if let route = export(segments[1]) { return route }
            guard runID(segments[1]) != nil else { throw notFound(request) }
        case "runners" where segments.count >= 2:
            try requireName(segments[1])
        case "courses" where segments.count >= 2:
            try requireName(segments[1], of: "course")
        case "assets" where segments.count >= 3 && segments[1] == "leaflet":
            // A fixed list of names: nothing else of Leaflet's folder is reachable.
            let name = segments.dropFirst(2).joined(separator: "/")
            guard LeafletFiles.names.contains(name) else { throw notFound(request) }
            return .leaflet(name)
        default:
            break
        }
        guard let asset = WebAssets.page(forPathSegments: segments) else { throw notFound(request) }
        return .page(asset)
    }

    static func apiRoute(_ segments: [String], _ request: HTTPRequest) throws(WebRouteError) -> WebRoute {
        switch (segments.first, segments.count) {
        case ("overview", 1):
            return .overview
        case ("badges", 1):
            return .badgeCatalogue
        case ("map", 1):
            return .mapSettings
        case ("runs", 2):
            guard let id = runID(segments[1]) else { throw notFound(request) }
            return .run(id)
        case ("runners", 2):
            return .runner(try requireName(segments[1]))
        case ("runners", 3) where segments[2] == "badges":
            return .badgeBoard(runner: try requireName(segments[1]))
        case ("courses", 2):
            return .course(try requireName(segments[1], of: "course"))
        case ("runners", 3) where segments[2] == "runs":
            let name = try requireName(segments[1])
            let offset = try integer(request, "offset", default: 0, range: 0...Int(Int32.max))
            let limit = try integer(request, "limit", default: Command.Limits.defaultRunsLimit,
                                    range: 1...Command.Limits.maximumRunsLimit)
            return .runs(runner: name, offset: offset, limit: limit)
        default:
            throw notFound(request)
        }
    }

    static func notFound(_ request: HTTPRequest) -> WebRouteError {
        WebRouteError(.notFound, "nothing at \(request.path)")
    }

    /// A name that can't be a runner's (nor a course's: courses are named like runners) is a page that can't exist.
    @discardableResult
    static func requireName(_ name: String, of what: String = "runner") throws(WebRouteError) -> String {
        guard Command.isValidName(name) else { throw WebRouteError(.notFound, "no \(what) \(name)") }
        return name
    }

    static func runID(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ ($0 &- 48) < 10 }),
              let id = Int64(text), id > 0 else { return nil }
        return id
    }

    static func export(_ segment: String) -> WebRoute? {
        guard let dot = segment.lastIndex(of: "."),
              let format = ExportFormat(rawValue: String(segment[segment.index(after: dot)...])),
              let id = runID(String(segment[..<dot])) else { return nil }
        return .export(run: id, format: format)
    }

    static func integer(_ request: HTTPRequest, _ name: String, default value: Int,
                        range: ClosedRange<Int>) throws(WebRouteError) -> Int {
        guard let text = request.query(name), !text.isEmpty else { return value }
        guard text.utf8.count <= 10, text.utf8.allSatisfy({ ($0 &- 48) < 10 }), let number = Int(text),
              range.contains(number) else {
            throw WebRouteError(.badRequest, "\(name) must be a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }

    /// A request's share token (`?token=T`: a private runner's page, API, stream and cheers); nil when it has
    /// none or one that cannot be a token.
    public static func shareToken(in request: HTTPRequest) -> String? {
        guard let text = request.query("token"), Command.isValidKey(text) else { return nil }
        return text
    }

    static func streamTarget(_ request: HTTPRequest) throws(WebRouteError) -> EventStreamTarget {
        let targets = request.queryItems.filter { $0.name == "watch" || $0.name == "coach" }
        guard targets.count == 1, let item = targets.first else {
            throw WebRouteError(.badRequest, "/events takes one of watch=NAME|* or coach=NAME|*")
        }
        if item.value == "*" { return EventStreamTarget(target: .everyone, isCoach: item.name == "coach") }
        guard Command.isValidName(item.value) else {
            throw WebRouteError(.badRequest, "\(item.name)= is a runner name or *")
        }
        return EventStreamTarget(target: .runner(item.value), isCoach: item.name == "coach")
    }

    /// The cheer's text from a text/plain or form body, checked by the line protocol's own `msg:` rules.
    static func cheer(to runner: String, _ request: HTTPRequest) throws(WebRouteError) -> WebRoute {
        try requireName(runner)
        let text: String
        switch request.mediaType {
        case nil, "text/plain":
            guard let body = request.bodyText else { throw WebRouteError(.badRequest, "the cheer is not UTF-8") }
            text = body
        case "application/x-www-form-urlencoded":
            let items: [HTTPQueryItem]
            do { items = try request.formItems() } catch { throw WebRouteError(error.status, error.reason) }
            guard let field = items.first(where: { $0.name == "text" }) else {
                throw WebRouteError(.unprocessableContent, "the form has no text field")
            }
            text = field.value
        default:
            throw WebRouteError(.unsupportedMediaType, "send the cheer as text/plain or a form")
        }
        // Said here so the offset is the text's own (the line the text goes into starts with `msg:`).
        if let nul = text.utf8.firstIndex(of: 0) {
            throw WebRouteError(.unprocessableContent, "NUL byte at offset \(text.utf8.distance(from: text.utf8.startIndex, to: nul))")
        }
        // A text box or `curl -d` may leave spaces or a line end around the text; inside, `msg:` rules apply.
        var trimmed = Substring(text)
        while let last = trimmed.last, last == " " || last == "\n" || last == "\r\n" || last == "\r" { trimmed.removeLast() }
        while trimmed.first == " " { trimmed.removeFirst() }
        guard !trimmed.isEmpty else { throw WebRouteError(.unprocessableContent, "msg: needs a text") }
        let command: Command
        do { command = try Command.parse("msg:" + trimmed) } catch { throw WebRouteError(.unprocessableContent, error.reason) }
        guard case .cheer(let checked) = command else { throw WebRouteError(.unprocessableContent, "not a cheer") }
        return .cheer(runner: runner, text: checked)
    }
}
