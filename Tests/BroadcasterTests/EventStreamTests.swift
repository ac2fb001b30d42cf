import Broadcaster
import Foundation
import MoonRunnerTestSupport
import RunStore
import Testing
import Wire

/// `GET /events`: web spectators get the same events as TCP ones, as JSON from the same formatter.
@Suite(.mayBlock) struct EventStreamTests {
    func http(_ server: Server) throws -> HTTPTestClient { try HTTPTestClient(port: try #require(server.httpPort)) }
    func http(_ server: PureServer) -> PureWebClient { server.web() }

    @Test func aStreamCarriesTheRunAsJSONWithTheLinesFields() async throws {
        try await onItsOwnThread {
            try withPureServer { server in
                let web = http(server)
                let head = try web.openStream("watch=ann")
                #expect(head.status == 200 && head.header("Content-Type")?.hasPrefix("text/event-stream") == true)
                let tcp = server.connect()
                try tcp.send("watch:ann")
                try tcp.expectNext("ok:watch")
                let (ann, _) = try connectRunner("ann", to: server)
                for line in straightRun(count: 5) { try ann.send(line) }
                try ann.send("stop:")
                let events = try web.events(until: "end")
                #expect(events.map { $0.event ?? "" }.filter { $0 != "pace" } == ["run", "badge", "end"], "\(events)")
                // Every event's JSON has the fields of the same line a TCP spectator got.
                let lines = try tcp.lines(until: "end:ann") { $0.hasPrefix("end:ann") }
                for (event, line) in zip(events, lines) {
                    let parsed = try Event.parse(line)
                    #expect(event.event == parsed.kind)
                    let json = event.json
                    #expect(json["runner"] as? String == "ann")
                    for field in parsed.fields { if let key = field.key { #expect(json[key] != nil, "\(key) in \(event.data)") } }
                }
                let ids = events.compactMap { $0.id.flatMap(UInt64.init) }
                #expect(ids.count == events.count && ids == ids.sorted(), "increasing ids: \(ids)")
            }
        }
    }

    /// A browser that comes back after a restart with the id it had must not be taken for one that saw newer
    /// events: the numbers go on rising from one server's life to the next.
    @Test func eventIDsGoOnRisingAcrossARestart() async throws {
        try await onItsOwnThread {
            var last: UInt64 = 0
            for round in 0..<2 {
                try withServer { server in
                    let web = try http(server)
                    _ = try web.openStream("watch=ann")
                    let (ann, _) = try connectRunner("ann", to: server)
                    for line in straightRun(count: 3) { try ann.send(line) }
                    try ann.send("stop:")
                    let ids = try web.events(until: "end").compactMap { $0.id.flatMap(UInt64.init) }
                    #expect((ids.first ?? 0) > last, "round \(round): \(ids) after \(last)")
                    last = ids.last ?? last
                }
            }
        }
    }

    @Test func aLateJoinerGetsTheWholeRunSoFarAsATrack() async throws {
        try await onItsOwnThread {
            try withPureServer { server in
                let (ann, _) = try connectRunner("ann", to: server)
                let run = straightRun(count: 300, speed: 3.7)
                for line in run { try ann.send(line) }
                try ann.expect("badge:ann id=atmosphere", timeout: 20)
                // The runner's own pace for the last fix: on several loops, the relay to the others went first.
                let last = run[run.count - 1].split(separator: ",").last!
                try ann.lines(until: "own pace \(last)", timeout: 20) { $0.hasPrefix("pace:ann") && $0.contains("ts=\(last) ") }
                let web = http(server)
                _ = try web.openStream("watch=ann")
                let first = try web.nextEvent()
                #expect(first.event == "track", "\(first)")
                let track = first.json
                #expect(track["runner"] as? String == "ann")
                #expect((track["points"] as? [[Double]])?.count ?? 0 > 250)
                let badges = (track["badges"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
                #expect(badges == ["earth", "atmosphere"])
                #expect((track["splits"] as? [[String: Any]])?.first?["unit"] as? String == "km")
                #expect((track["pace"] as? [String: Any])?["dist"] as? Double ?? 0 > 1000)
            }
        }
    }

    @Test func aReconnectWithLastEventIDGetsExactlyWhatItMissed() async throws {
        try await onItsOwnThread {
            try withPureServer { server in
                let (ann, _) = try connectRunner("ann", to: server)
                let run = straightRun(count: 20)
                for line in run[..<5] { try ann.send(line) }
                // The run is under way (on several loops: the others heard of it) before the page opens.
                try ann.lines(until: "pace of fix 5") { $0.contains("ts=\(run[4].split(separator: ",").last!)") }
                let web = http(server)
                _ = try web.openStream("watch=ann")
                _ = try web.events(until: "track")
                for line in run[5..<8] { try ann.send(line) }
                var last = try web.nextEvent()
                while !(last.event == "pace" && last.json["time"] as? Double == 7) { last = try web.nextEvent() }
                let lastID = try #require(last.id)
                web.close()
                // Away for a while: three fixes' events go by.
                for line in run[8..<11] { try ann.send(line) }
                try ann.lines(until: "pace of fix 11") { $0.contains("ts=\(run[10].split(separator: ",").last!)") }
                let back = http(server)
                _ = try back.openStream("watch=ann", headers: "Last-Event-ID: \(lastID)\r\n")
                var resumed: [HTTPTestClient.StreamEvent] = []
                while resumed.count < 3 { resumed.append(try back.nextEvent()) }
                #expect(resumed.allSatisfy { $0.event == "pace" }, "\(resumed)")
                #expect(resumed.map { $0.id.flatMap(UInt64.init)! }.allSatisfy { $0 > UInt64(lastID)! })
                let times = resumed.map { $0.json["time"] as? Double ?? 0 }
                #expect(times == [8, 9, 10], "the three missed fixes, in order: \(times)")
            }
        }
    }

    @Test func coachesGetNoPaceAndBadNamesAre400() async throws {
        try await onItsOwnThread {
            try withPureServer { server in
                let coach = http(server)
                _ = try coach.openStream("coach=*")
                let (ann, _) = try connectRunner("ann", to: server)
                for line in straightRun(count: 5) { try ann.send(line) }
                try ann.send("stop:")
                let events = try coach.events(until: "end")
                #expect(events.map { $0.event ?? "" } == ["run", "badge", "end"])
                let bad = http(server)
                #expect(try bad.get("/events?watch=no%20such").status == 400)
                #expect(try http(server).get("/events").status == 400)
            }
        }
    }

    @Test func aHeadOfTheStreamIsItsHeadAlone() async throws {
        try await onItsOwnThread {
            try withServer { server in
                let (ann, _) = try connectRunner("ann", to: server)
                for line in straightRun(count: 5) { try ann.send(line) }
                _ = try ann.expect("pace:ann")
                // A GET would get a track snapshot and then every event; a HEAD gets the same head, no body, and the end.
                let (head, after) = try http(server).head("/events?watch=ann")
                #expect(head.status == 200 && head.header("Content-Type")?.hasPrefix("text/event-stream") == true)
                #expect(after.isEmpty, "\(String(decoding: after, as: UTF8.self))")
                // A request a GET would get 400 for: the same 400, and no body either.
                for query in ["watch=no%20such", "coach=bad!", ""] {
                    let (refused, after) = try http(server).head("/events?\(query)")
                    #expect(refused.status == 400 && after.isEmpty, "\(query): \(String(decoding: after, as: UTF8.self))")
                }
            }
        }
    }

    @Test func anIdleStreamGetsHeartbeats() async throws {
        try await onItsOwnThread {
            try withServer({ $0.eventStreamHeartbeat = 1 }) { server in
                let web = try http(server)
                try web.send("GET /events?watch=* HTTP/1.1\r\nHost: t\r\n\r\n")
                let raw = try TestClientBytes.read(web, containing: ": heartbeat", timeout: 5)
                #expect(raw.contains(": heartbeat"))
            }
        }
    }

    /// A late joiner's stream holds what happens while its snapshot is read off the loop; one that falls more
    /// than ``Server/maximumHeldEvents`` behind is closed (at the end of the turn: the hub's broadcast is not
    /// re-entered), and nobody else notices.
    @Test func aStreamHoldingTooManyEventsBeforeItsSnapshotIsClosedAndNobodyElseNotices() async throws {
        let store = GatedStore(gatingFixes: true)
        try await onItsOwnThread {
            try withServer(store: store) { server in
                let keen = try TestClient(port: server.port)
                try keen.send("watch:ann")
                try keen.expectNext("ok:watch")
                let (ann, _) = try connectRunner("ann", to: server)
                let run = straightRun(count: 4096 + 200, from: Date().timeIntervalSince1970 - 5000)
                // A recording from over an hour ago, sent as a phone sends what it kept offline.
                try ann.send(run[0])
                try ann.send(run[1])
                try ann.expect("run:ann")
                let web = try http(server)
                _ = try web.openStream("watch=ann")  // its snapshot waits at the store's gate
                try ann.write(Array(run.dropFirst(2).map { $0 + "\n" }.joined().utf8))
                let last = run[run.count - 1].split(separator: ",").last!
                try keen.lines(until: "the last pace", timeout: 60) { $0.hasPrefix("pace:ann") && $0.contains("ts=\(last) ") }
                #expect(try web.awaitClose(timeout: 10), "the stream behind by more than it may hold is closed")
                store.open(times: 4)
                try ann.send("stop:")
                try keen.expect("end:ann", timeout: 20)
                try ann.expect("end:ann", timeout: 20)
            }
        }
    }
}

/// Reads raw text off an HTTP test client until it contains a marker.
enum TestClientBytes {
    static func read(_ client: HTTPTestClient, containing marker: String, timeout: Double) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var text = ""
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !text.contains(marker) {
            guard deadline.timeIntervalSinceNow > 0 else { throw HTTPTestClient.Timeout(waitingFor: marker) }
            var descriptor = pollfd(fd: client.socket.fileDescriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 100)
            if case .processed(let count) = try chunk.withUnsafeMutableBytes({ try client.socket.read(into: $0) }), count > 0 {
                text += String(decoding: chunk[0..<count], as: UTF8.self)
            }
        }
        return text
    }
}
