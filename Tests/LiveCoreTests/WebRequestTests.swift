@testable import LiveCore
import HTTP
import MoonRunnerTestSupport
import RunStore
import Testing
import WebRoutes
import Wire

/// The web's requests as the hub decides them, effect by effect: which loop answers, what waits for the store,
/// and how wrong tokens are answered. No sockets, no driver: the effects are taken as a driver takes them.
@Suite struct WebRequestTests {
    let store = MemoryRunStore()
    let start = 1_700_000_000.0
    let browser = ConnectionID(9)

    /// A parsed request, as the driver hands it over.
    func request(_ raw: String) throws -> (WebRoute, HTTPRequest) {
        var parser = HTTPRequestParser()
        parser.append(Array(raw.utf8))
        let request = try #require(try parser.nextRequest())
        return (try WebRoute.resolve(request), request)
    }

    func post(_ path: String, _ body: String) throws -> (WebRoute, HTTPRequest) {
        try request("POST \(path) HTTP/1.1\r\nHost: t\r\nContent-Type: application/x-www-form-urlencoded\r\n" +
                    "Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
    }

    /// Every effect of the inputs so far.
    func effects(of hub: Hub) -> [HubEffect] {
        var taken: [HubEffect] = []
        while let effect = hub.effects.next() { taken.append(effect) }
        return taken
    }

    /// The statuses of the answers among `effects` (a slowed one marked `later`).
    func answers(_ effects: [HubEffect]) -> [String] {
        effects.compactMap { effect in
            switch effect {
            case .respond(_, let response, let close): "\(response.status.code)\(close ? " close" : "")"
            case .respondLater(_, let response, let seconds): "\(response.status.code) later \(seconds)"
            case .respondOnceStored(_, let response): "\(response.status.code) once stored"
            default: nil
            }
        }
    }

    /// ann claimed on a hub (her key returned).
    func hubWithAnn(_ configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> (Hub, key: String) {
        var configuration = ServerConfiguration()
        configure(&configuration)
        let hub = Hub(configuration: configuration, store: store)
        let runner = ConnectionID(1)
        hub.connected(runner, address: "10.0.0.1", now: start)
        hub.learned(nil, named: "ann")
        hub.received(.identify(name: "ann", key: nil), from: runner, now: start)
        var key: String?
        for case .sendOnceStored(let lines, _, _) in effects(of: hub) {
            key = try OkEvent(line: String(decoding: lines[0].dropLast(), as: UTF8.self))["key"]
        }
        return (hub, try #require(key))
    }

    /// A page action or a phone of a runner another loop owns goes to that loop, with its request, undecided here.
    @Test func aRequestForARunnerAnotherLoopOwnsIsHandedOver() throws {
        let (hub, key) = try hubWithAnn()
        hub.share(sequence: nil, owns: { $0 != "bob" })
        for (route, request) in [try post("/runners/bob/stop", "key=\(key)"),
                                 try request("GET /runners/bob/devices HTTP/1.1\r\nHost: t\r\n\r\n")] {
            #expect(hub.request(route, request, from: browser, address: "10.0.0.2", now: start) == nil)
            let decided = effects(of: hub)
            #expect(decided.count == 1)
            guard case .handOver(let id, let runner)? = decided.first else { Issue.record("\(decided)"); continue }
            #expect(id == browser && runner == "bob")
        }
        // Its own runner's are decided here: a wrong key is answered, never handed over.
        _ = hub.request(try post("/runners/ann/stop", "key=wrong").0, try post("/runners/ann/stop", "key=wrong").1,
                        from: browser, address: "10.0.0.2", now: start)
        #expect(answers(effects(of: hub)) == ["403"])
    }

    /// The page's course choice of a course the hub has not read: looked up in the store first, with the request
    /// to decide again; once known, answered at once.
    @Test func aCourseThePageChoosesIsLookedUpFirst() throws {
        let (hub, key) = try hubWithAnn()
        let (route, request) = try post("/runners/ann/course", "key=\(key)&course=park")
        _ = hub.request(route, request, from: browser, address: "10.0.0.2", now: start)
        let asked = effects(of: hub)
        guard case .lookUp(.course("park"), .request(.runnerAction("ann", .course), _, _), browser)? = asked.first else {
            Issue.record("\(asked)")
            return
        }
        #expect(answers(asked).isEmpty, "nothing answered before the course is read")
        hub.learnedCourse(nil, named: "park")
        _ = hub.request(route, request, from: browser, address: "10.0.0.2", now: start)
        #expect(answers(effects(of: hub)) == ["404"], "no such course, said once it is known")
    }

    /// Wrong share tokens on the web count per address: the URL answered as if no token came (a private runner
    /// stays hidden), until five times the limit, then refused with the connection kept alive; a right key from the
    /// same address is still taken.
    @Test func wrongTokensOnTheWebAreRefusedPastFiveTimesTheLimit() throws {
        let (hub, key) = try hubWithAnn { $0.deviceFailuresPerMinute = 2 }
        var fromStore = 0
        var seen: [String] = []
        for _ in 0..<11 {
            let (route, request) = try request("GET /api/runners/ann?token=\(String(repeating: "1", count: 32)) HTTP/1.1\r\nHost: t\r\n\r\n")
            _ = hub.request(route, request, from: browser, address: "10.0.0.2", now: start + 1)
            let decided = effects(of: hub)
            fromStore += decided.filter { if case .respondFromStore = $0 { true } else { false } }.count
            seen += answers(decided)
        }
        #expect(fromStore == 10 && seen == ["429"], "\(fromStore) \(seen)")
        let (route, request) = try post("/runners/ann/devices", "key=\(key)")
        _ = hub.request(route, request, from: browser, address: "10.0.0.2", now: start + 1)
        #expect(answers(effects(of: hub)) == ["201 once stored"], "the right key is never held up")
    }
}
