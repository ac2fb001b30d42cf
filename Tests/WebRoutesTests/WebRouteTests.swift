import HTTP
import Testing
import WebAssets
@testable import WebRoutes
import Wire

/// Every URL of protocol.md Part 2, and the ways to get each one wrong.
@Suite struct WebRouteTests {
    static func request(_ method: String, _ target: String, headers: [String] = [], body: String = "") -> HTTPRequest? {
        var lines = ["\(method) \(target) HTTP/1.1", "Host: localhost"] + headers
        if !body.isEmpty || method == "POST" { lines.append("Content-Length: \(body.utf8.count)") }
        var parser = HTTPRequestParser()
        parser.append(Array((lines.joined(separator: "\r\n") + "\r\n\r\n" + body).utf8))
        return try? parser.nextRequest()
    }

    static func route(_ method: String, _ target: String, headers: [String] = [], body: String = "") -> Result<WebRoute, WebRouteError>? {
        guard let request = request(method, target, headers: headers, body: body) else { return nil }
        do { return .success(try WebRoute.resolve(request)) } catch { return .failure(error) }
    }

    struct Good: Sendable, CustomTestStringConvertible {
        let method: String
        let target: String
        let route: WebRoute
        var testDescription: String { "\(method) \(target)" }
    }

    static func page(_ name: String) -> WebRoute { .page(WebAssets.asset(named: name)!) }

    static let good: [Good] = [
        Good(method: "GET", target: "/", route: page("index.html")),
        Good(method: "HEAD", target: "/", route: page("index.html")),
        Good(method: "GET", target: "/runners/ann", route: page("runner.html")),
        Good(method: "GET", target: "/runners/ann/badges", route: page("badges.html")),
        Good(method: "GET", target: "/runs/17", route: page("run.html")),
        Good(method: "GET", target: "/courses/berlin", route: page("course.html")),
        Good(method: "GET", target: "/api/courses/berlin", route: .course("berlin")),
        Good(method: "HEAD", target: "/api/courses/park-5k.v2", route: .course("park-5k.v2")),
        Good(method: "GET", target: "/assets/common.js", route: page("common.js")),
        Good(method: "GET", target: "/events?watch=ann", route: .events(EventStreamTarget(target: .runner("ann"), isCoach: false))),
        Good(method: "GET", target: "/events?watch=*", route: .events(EventStreamTarget(target: .everyone, isCoach: false))),
        Good(method: "GET", target: "/events?coach=ann", route: .events(EventStreamTarget(target: .runner("ann"), isCoach: true))),
        Good(method: "GET", target: "/events?coach=%2A&x=1", route: .events(EventStreamTarget(target: .everyone, isCoach: true))),
        Good(method: "GET", target: "/api/overview", route: .overview),
        Good(method: "GET", target: "/api/badges", route: .badgeCatalogue),
        Good(method: "GET", target: "/api/runners/ann", route: .runner("ann")),
        Good(method: "GET", target: "/api/runs/17", route: .run(17)),
        Good(method: "GET", target: "/api/runners/ann/runs", route: .runs(runner: "ann", offset: 0, limit: 20)),
        Good(method: "GET", target: "/api/runners/ann/runs?offset=40&limit=100", route: .runs(runner: "ann", offset: 40, limit: 100)),
        Good(method: "GET", target: "/api/runners/ann/runs?offset=&limit=", route: .runs(runner: "ann", offset: 0, limit: 20)),
        Good(method: "GET", target: "/api/runners/ann/badges", route: .badgeBoard(runner: "ann")),
        Good(method: "GET", target: "/runs/17.gpx", route: .export(run: 17, format: .gpx)),
        Good(method: "GET", target: "/runs/17.geojson", route: .export(run: 17, format: .geojson)),
        Good(method: "HEAD", target: "/runs/17.svg", route: .export(run: 17, format: .svg)),
        Good(method: "GET", target: "/metrics", route: .metrics),
        Good(method: "GET", target: "/healthz", route: .health),
        Good(method: "GET", target: "/api/map", route: .mapSettings),
        Good(method: "GET", target: "/assets/map.js", route: page("map.js")),
        Good(method: "GET", target: "/assets/leaflet/leaflet.js", route: .leaflet("leaflet.js")),
        Good(method: "GET", target: "/assets/leaflet/images/layers-2x.png", route: .leaflet("images/layers-2x.png")),
    ]

    @Test(arguments: good) func everyURLHasItsRoute(_ test: Good) throws {
        let result = try #require(Self.route(test.method, test.target))
        #expect(try result.get() == test.route)
    }

    struct Bad: Sendable, CustomTestStringConvertible {
        let method: String
        let target: String
        let status: Int
        var testDescription: String { "\(method) \(target) → \(status)" }
    }

    static let bad: [Bad] = [
        Bad(method: "GET", target: "/nothing", status: 404),
        // Leaflet's folder is reachable only through its fixed list of files.
        Bad(method: "GET", target: "/assets/leaflet/leaflet.esm.js", status: 404),
        Bad(method: "GET", target: "/assets/leaflet/../../../etc/passwd", status: 404),
        Bad(method: "GET", target: "/assets/leaflet/images/%2E%2E/leaflet.js", status: 404),
        Bad(method: "GET", target: "/assets/leaflet/", status: 404),
        Bad(method: "POST", target: "/api/map", status: 405),
        Bad(method: "GET", target: "/runners", status: 404),
        Bad(method: "GET", target: "/runners/ann/nothing", status: 404),
        Bad(method: "GET", target: "/runners/no%20spaces", status: 404),
        Bad(method: "GET", target: "/runners/" + String(repeating: "a", count: 33), status: 404),
        Bad(method: "GET", target: "/runs/abc", status: 404),
        Bad(method: "GET", target: "/courses", status: 404),
        Bad(method: "GET", target: "/courses/no%20spaces", status: 404),
        Bad(method: "GET", target: "/courses/berlin/runners", status: 404),
        Bad(method: "GET", target: "/api/courses", status: 404),
        Bad(method: "GET", target: "/api/courses/" + String(repeating: "a", count: 33), status: 404),
        Bad(method: "GET", target: "/api/courses/berlin/runners", status: 404),
        Bad(method: "POST", target: "/api/courses/berlin", status: 405),
        Bad(method: "GET", target: "/runs/0", status: 404),
        Bad(method: "GET", target: "/runs/17.pdf", status: 404),
        Bad(method: "GET", target: "/api/runs/-1", status: 404),
        Bad(method: "GET", target: "/api/runs/99999999999999999999", status: 404),
        Bad(method: "GET", target: "/api", status: 404),
        Bad(method: "GET", target: "/assets/secret.txt", status: 404),
        Bad(method: "GET", target: "/events", status: 400),
        Bad(method: "GET", target: "/events?watch=ann&coach=bob", status: 400),
        Bad(method: "GET", target: "/events?watch=ann&watch=bob", status: 400),
        Bad(method: "GET", target: "/events?watch=a%20b", status: 400),
        Bad(method: "GET", target: "/api/runners/ann/runs?limit=101", status: 400),
        Bad(method: "GET", target: "/api/runners/ann/runs?limit=0", status: 400),
        Bad(method: "GET", target: "/api/runners/ann/runs?offset=-1", status: 400),
        Bad(method: "GET", target: "/api/runners/ann/runs?offset=1e3", status: 400),
        Bad(method: "POST", target: "/", status: 405),
        Bad(method: "DELETE", target: "/api/runs/17", status: 405),
        Bad(method: "GET", target: "/runners/ann/cheers", status: 405),
        Bad(method: "BREW", target: "/", status: 501),
    ]

    @Test(arguments: bad) func wrongRequestsGetTheirStatus(_ test: Bad) throws {
        let result = try #require(Self.route(test.method, test.target))
        guard case .failure(let error) = result else {
            Issue.record("routed to \(result)")
            return
        }
        #expect(error.status.code == test.status, "\(error.reason)")
    }

    @Test func methodNotAllowedSaysWhichAre() throws {
        guard case .failure(let error) = try #require(Self.route("POST", "/api/overview")) else { throw CancellationError() }
        #expect(error.allowed == ["GET", "HEAD"])
        #expect(error.response.headers["Allow"] == "GET, HEAD")
        guard case .failure(let cheer) = try #require(Self.route("GET", "/runners/ann/cheers")) else { throw CancellationError() }
        #expect(cheer.response.headers["Allow"] == "POST")
    }

    enum Expected: Sendable {
        case success(String)
        case failure(Int)
    }

    struct CheerCase: Sendable, CustomTestStringConvertible {
        let contentType: String?
        let body: String
        let expected: Expected
        var testDescription: String { "\(contentType ?? "no type"): \(body.prefix(30))" }
    }

    static let cheers: [CheerCase] = [
        CheerCase(contentType: nil, body: "Go Ann!", expected: .success("Go Ann!")),
        CheerCase(contentType: "text/plain; charset=utf-8", body: "  Allez Ann 🌙\r\n", expected: .success("Allez Ann 🌙")),
        CheerCase(contentType: "application/x-www-form-urlencoded", body: "text=Go+Ann%21", expected: .success("Go Ann!")),
        CheerCase(contentType: "application/x-www-form-urlencoded;charset=UTF-8", body: "from=x&text=%F0%9F%8C%99", expected: .success("🌙")),
        CheerCase(contentType: "application/json", body: #"{"text":"hi"}"#, expected: .failure(415)),
        CheerCase(contentType: "text/plain", body: "", expected: .failure(422)),
        CheerCase(contentType: "text/plain", body: "   ", expected: .failure(422)),
        CheerCase(contentType: "text/plain", body: String(repeating: "a", count: 281), expected: .failure(422)),
        CheerCase(contentType: "text/plain", body: String(repeating: "é", count: 280), expected: .success(String(repeating: "é", count: 280))),
        CheerCase(contentType: "text/plain", body: "line\nbreak", expected: .failure(422)),
        CheerCase(contentType: "application/x-www-form-urlencoded", body: "text=a%0Ab", expected: .failure(422)),
        CheerCase(contentType: "application/x-www-form-urlencoded", body: "message=hi", expected: .failure(422)),
        CheerCase(contentType: "application/x-www-form-urlencoded", body: "text=%ZZ", expected: .failure(400)),
    ]

    @Test(arguments: cheers) func cheersFollowTheRulesOfMsg(_ test: CheerCase) throws {
        let headers = test.contentType.map { ["Content-Type: \($0)"] } ?? []
        let result = try #require(Self.route("POST", "/runners/ann/cheers", headers: headers, body: test.body))
        switch (result, test.expected) {
        case (.success(.cheer(let runner, let text)), .success(let expected)):
            #expect(runner == "ann")
            #expect(text == expected)
        case (.failure(let error), .failure(let status)):
            #expect(error.status.code == status, "\(error.reason)")
        default:
            Issue.record("got \(result)")
        }
    }

    @Test func aNulInACheerIsPlacedInTheTextAsSent() throws {
        let result = try #require(Self.route("POST", "/runners/ann/cheers", headers: ["Content-Type: text/plain"],
                                             body: " he\u{0}lo"))
        guard case .failure(let error) = result else { Issue.record("got \(result)"); return }
        #expect(error.status.code == 422 && error.reason == "NUL byte at offset 3", "\(error.reason)")
    }

    @Test func aCourseNameThatCannotBeIsNotFoundAsACourse() throws {
        guard case .failure(let error) = try #require(Self.route("GET", "/api/courses/a%20b")) else { throw CancellationError() }
        #expect(error.status.code == 404 && error.reason == "no course a b", "\(error.reason)")
    }

    @Test func exportsNameTheirDownload() {
        #expect(ExportFormat.gpx.contentType == "application/gpx+xml")
        #expect(ExportFormat.geojson.contentDisposition(run: 17) == #"attachment; filename="moonrunner-run-17.geojson""#)
    }
}
