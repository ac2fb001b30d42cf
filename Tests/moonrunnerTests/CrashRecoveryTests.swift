import Foundation
import MoonRunnerTestSupport
import RunCore
import RunStore
import Testing
import Wire

/// `kill -9` in the middle of a run loses nothing that was acked, and the resumed run measures the same.
@Suite(.mayBlock) struct CrashRecoveryTests {
    /// A gently winding 1 fix/s route, so the distance depends on every fix.
    static func route(count: Int, start: Double) -> [(line: String, fix: Fix)] {
        (0..<count).map { index in
            let t = Double(index)
            let lat = 48.85 + t * 2.5 / 111_229 + sin(t / 40) * 0.0002
            let lon = 2.35 + sin(t / 25) * 0.0003
            let fix = Fix(latitude: lat, longitude: lon, accuracy: 4, timestamp: start + t)
            return ("loc:\(lat),\(lon),4,\(Int(start) + index)", fix)
        }
    }

    /// The newest acked timestamp among `lines`.
    static func newestAck(in lines: [String], after current: Double) -> Double {
        lines.compactMap { line -> Double? in
            guard line.hasPrefix("ack:"), let ack = try? AckEvent(event: Event.parse(line)) else { return nil }
            return Double(ack.timestamp)
        }.reduce(current, max)
    }

    @Test func killNineMidRunThenResumeLosesNothingAndMeasuresTheSame() throws {
        let folder = temporaryFolder()
        let database = folder.appendingPathComponent("crash.sqlite").path
        let start = (Date().timeIntervalSince1970 - 1).rounded(.down)
        let route = Self.route(count: 600, start: start)
        let killAfter = Int.random(in: 100...500)

        // The uninterrupted reference: the same fixes through the same engine.
        var reference = RunTracker()
        for point in route { _ = reference.add(point.fix, now: point.fix.timestamp) }
        let expected = reference.finish().distance

        let first = try ChildProcess(["serve", "--port", "0", "--http-port", "0", "--db", database])
        let phone = try TestClient(port: try first.listeningPort())
        try phone.send("iam:ann")
        let key = try #require(try OkEvent(event: Event.parse(phone.expectNext("ok:iam")))["key"])
        for point in route[..<killAfter] { try phone.send(point.line) }
        // Wait for some ack, so the crash lands with data on disk and data in flight.
        try phone.expect("ack:ann")
        first.signal(SIGKILL)
        _ = first.awaitExit()
        var acked = Self.newestAck(in: (try? phone.awaitClose()) ?? [], after: 0)
        acked = Self.newestAck(in: phone.received, after: acked)
        #expect(acked >= start, "killed after \(killAfter) fixes with \(acked - start + 1) acked")

        let second = try ChildProcess(["serve", "--port", "0", "--http-port", "0", "--db", database])
        defer { second.signal(SIGTERM); _ = second.awaitExit() }
        let again = try TestClient(port: try second.listeningPort())
        try again.send("iam:ann \(key)")
        let ok = try OkEvent(event: Event.parse(again.expectNext("ok:iam")))
        let runID = try #require(ok["resumed"].flatMap { Int64($0) }, "the run survived the crash")
        // The client side keeps what was not acked and resends it, then goes on.
        for point in route where point.fix.timestamp > acked { try again.send(point.line) }
        try again.send("stop:")
        let end = try RunEndedEvent(event: Event.parse(again.expect("end:ann")))
        #expect(end.runID == runID)
        #expect(abs(end.distance - expected) < 0.01, "killed after \(killAfter): \(end.distance) vs \(expected)")
        second.signal(SIGTERM)
        #expect(second.awaitExit() == 0)

        let store = try SQLiteRunStore(path: database)
        defer { store.close() }
        let stored = try store.fixes(ofRun: runID)
        let timestamps = stored.map(\.fix.timestamp)
        #expect(Set(timestamps).count == timestamps.count, "every fix exactly once")
        #expect(timestamps.count == route.count, "every fix kept")
        #expect(timestamps.filter { $0 <= acked }.count == Int(acked - start) + 1, "every acked fix is there")
        let saved = try #require(try store.run(id: runID))
        #expect(saved.record.status == .saved)
    }
}
