@testable import LiveCore
import Foundation
import MoonRunnerTestSupport
import RunStore
import Testing
import Wire

/// Private runners over the wire: the JSON API, pages' data, exports and event streams answer for a private
/// runner exactly as for a missing one, and its share link opens them until `unshare:`.
@Suite struct PrivacyServerTests {
    static func fixes(count: Int, start: Double) -> [String] {
        (0..<count).map { index in
            "loc:\(NumberFormat.string(48.85 + Double(index) * 3 / 111_229, decimals: 7)),2.35,4,\(Int(start) + index)"
        }
    }

    @Test func theWebShowsAPrivateRunnerOnlyWithItsShareLink() async throws {
        try await onItsOwnThread {
            try withPureServer { server in
                let (ann, _) = try connectRunner("ann", to: server)
                try ann.send("private:on")
                try ann.expect("ok:private private=yes")
                for line in Self.fixes(count: 60, start: Date().timeIntervalSince1970.rounded(.down)) { try ann.send(line) }
                let run = try RunStartedEvent(event: Event.parse(ann.expect("run:ann")))
                try ann.expect("ack:ann")
                let web = server.web()
                // Each answer about ann (and her run) is byte for byte the answer about a name (a run) nobody has.
                let missing = run.runID + 1000
                for (about, nobody) in [("/api/runners/ann", "/api/runners/zed"),
                                        ("/api/runners/ann/runs", "/api/runners/zed/runs"),
                                        ("/api/runners/ann/badges", "/api/runners/zed/badges"),
                                        ("/api/runs/\(run.runID)", "/api/runs/\(missing)"),
                                        ("/runs/\(run.runID).gpx", "/runs/\(missing).gpx")] {
                    let hidden = try web.get(about), absent = try web.get(nobody)
                    #expect(hidden.status == 404 && absent.status == 404, "\(about): \(hidden)")
                    #expect(hidden.text.replacingOccurrences(of: "ann", with: "zed")
                        .replacingOccurrences(of: String(run.runID), with: String(missing)) == absent.text, "\(about)")
                }
                #expect(!(try web.get("/api/overview").text.contains("ann")))
                let cheer = "POST /runners/ann/cheers HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nGo"
                try web.send(cheer)
                #expect(try web.response().status == 404)

                // The share link opens the same URLs and the live stream.
                try ann.send("share:")
                let token = try #require(try OkEvent(event: Event.parse(ann.expect("ok:share")))["token"])
                #expect(try web.get("/api/runners/ann?token=\(token)").status == 200)
                #expect(try web.get("/api/runs/\(run.runID)?token=\(token)").status == 200)
                #expect(try web.get("/runs/\(run.runID).gpx?token=\(token)").status == 200)
                #expect(try web.get("/api/runners/ann?token=0123456789abcdef0123456789abcdef").status == 404)
                let stream = server.web()
                #expect(try stream.openStream("watch=ann&token=\(token)").status == 200)
                _ = try stream.events(until: "track")
                for line in Self.fixes(count: 62, start: Date().timeIntervalSince1970.rounded(.down) - 61).suffix(1) {
                    try ann.send(line)
                }
                let plain = server.web()
                #expect(try plain.openStream("watch=ann").status == 200)
                // unshare: the stream with the token is closed at once; the one without never had anything.
                try ann.send("unshare:*")
                try ann.expect("ok:unshare count=1")
                #expect(try stream.awaitClose(timeout: 5))
                #expect(try web.get("/api/runners/ann?token=\(token)").status == 404)
                try ann.send("stop:")
                try ann.expect("end:ann")
                #expect(throws: HTTPTestClient.Timeout.self) { try plain.nextEvent(timeout: 0.5) }
            }
        }
    }

    /// Every latitude written in `bytes` (the route runs due north along one meridian, so a latitude alone says
    /// how far from home a point is).
    static func latitudes(in bytes: String) -> [Double] {
        let pattern = try! NSRegularExpression(pattern: #"48\.8[0-9]{4,}"#)
        let range = NSRange(bytes.startIndex..., in: bytes)
        return pattern.matches(in: bytes, range: range).compactMap { Range($0.range, in: bytes).flatMap { Double(bytes[$0]) } }
    }

    @Test func noPositionInsideThePrivacyZoneReachesAnyoneButTheRunner() async throws {
        try await onItsOwnThread {
            try withPureServer { server in
                let (ann, _) = try connectRunner("ann", to: server)
                try ann.send("privacy:200")
                try ann.expect("ok:privacy zone=200")
                let spectator = server.connect()
                try spectator.send("watch:ann")
                try spectator.expect("ok:watch")
                let stream = server.web()
                #expect(try stream.openStream("watch=ann").status == 200)
                // From home (48.85 N) 800 m north and back home, 4 m/s, one fix a second.
                let home = 48.85, start = Date().timeIntervalSince1970.rounded(.down)
                let lines = (0...400).map { second -> String in
                    let metres = second <= 200 ? Double(second) * 4 : Double(400 - second) * 4
                    return "loc:\(NumberFormat.string(home + metres / 111_229, decimals: 7)),2.35,4,\(Int(start) + second)"
                }
                for line in lines[...300] { try ann.send(line) }
                try ann.expect("ack:ann ts=\(Int(start) + 300)", timeout: 20)
                // Live, a late viewer's track starts at the first point shown: no distance from the hidden start.
                let live = try JSONSerialization.jsonObject(with: Data(server.web().get("/api/runners/ann").body))
                let track = (live as? [String: Any])?["track"] as? [String: Any]
                let livePoints = try #require(track?["points"] as? [[Double]])
                #expect(livePoints.count > 50 && livePoints.first?.suffix(2) == [0, 0], "\(livePoints.prefix(2))")
                for line in lines[301...] { try ann.send(line) }
                try ann.send("stop:")
                let end = try RunEndedEvent(event: Event.parse(ann.expect("end:ann", timeout: 20)))
                _ = try spectator.expect("end:ann", timeout: 20)
                let streamed = try stream.events(until: "end", timeout: 20)
                let web = server.web()
                var foreign = spectator.received.joined(separator: "\n") + streamed.map(\.data).joined(separator: "\n")
                for path in ["/api/runners/ann", "/api/runs/\(end.runID)", "/runs/\(end.runID).gpx",
                             "/runs/\(end.runID).geojson", "/runs/\(end.runID).svg", "/runs/\(end.runID).tcx"] {
                    let answer = try web.get(path)
                    #expect(answer.status == 200, "\(path): \(answer)")
                    foreign += "\n" + answer.text
                }
                let zone = 200 / 111_229.0
                let seen = Self.latitudes(in: foreign)
                #expect(seen.count > 100, "the others do see the middle of the run")
                let inside = seen.filter { abs($0 - home) < zone }
                #expect(inside.isEmpty, "\(inside.count) latitudes within 200 m of home, e.g. \(inside.prefix(3))")
                // The runner sees all of it.
                #expect(Self.latitudes(in: ann.received.joined(separator: "\n")).contains { abs($0 - home) < zone / 4 })
                #expect(end.distance > 1500, "the zone still counts: \(end.distance)")
                // The points others get count their distance and time from the first one shown (some 200 m and 50 s
                // in): the distance from the hidden start would point back to it on a straight.
                let run = try JSONSerialization.jsonObject(with: Data(web.get("/api/runs/\(end.runID)").body)) as? [String: Any]
                let points = try #require(run?["points"] as? [[Double]])
                let first = try #require(points.first), last = try #require(points.last)
                #expect(first[2] == 0 && first[3] == 0, "\(first)")
                #expect(last[2] > end.distance - 480 && last[2] < end.distance - 320, "\(last) of \(end.distance) m")
                // The run's own figures are the run's.
                let summary = try #require(run?["summary"] as? [String: Any])
                #expect(summary["dist"] as? Double == end.distance)
                // Nor do the exports mark a kilometre from the start.
                #expect(!(try web.get("/runs/\(end.runID).geojson").text.contains("\"split\"")))
                #expect(try web.get("/runs/\(end.runID).tcx").text.components(separatedBy: "<Lap ").count == 2, "one lap")
            }
        }
    }

    @Test func wrongShareTokensOnTheEventStreamCountTowardTheLimit() async throws {
        try await onItsOwnThread {
            try withPureServer({ $0.deviceFailuresPerMinute = 1 }) { server in
                let (ann, _) = try connectRunner("ann", to: server)
                try ann.send("private:on")
                try ann.expect("ok:private private=yes")
                // Each guess opens an empty stream (as for a name nobody has); past five times the limit the
                // address is refused.
                for _ in 0..<5 {
                    let guess = server.web()
                    #expect(try guess.openStream("watch=ann&token=\(String(repeating: "0", count: 32))").status == 200)
                }
                #expect(try server.web().get("/events?watch=ann&token=\(String(repeating: "1", count: 32))")
                    .status == 429)
            }
        }
    }

    @Test func aConnectionGuessingKeysIsStoppedAndClosed() async throws {
        try await onItsOwnThread {
            try withPureServer({ $0.deviceFailuresPerMinute = 1 }) { server in
                _ = try connectRunner("ann", to: server)
                let guesser = server.connect()
                try guesser.send("iam:ann 0123456789abcdef0123456789abcdef")
                try guesser.expect("err:wrong_key \"wrong key for ann\"")
                _ = try guesser.awaitClose(timeout: 5)  // a connection's limit
                // The address is slowed (each answer later), then refused for the minute, on new connections too.
                var answers: [String] = []
                while answers.last?.contains("too many") != true, answers.count < 20 {
                    let again = server.connect()
                    try again.send("watch:ann 0123456789abcdef0123456789abcdef")
                    answers.append(try again.expect("err:wrong_key", timeout: 10))
                }
                #expect(answers.count == 5, "4 slowed, the 6th refused: \(answers)")
                #expect(answers.last == "err:wrong_key \"too many wrong keys or tokens: wait a minute\"")
            }
        }
    }
}
