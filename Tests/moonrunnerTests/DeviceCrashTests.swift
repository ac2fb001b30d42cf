import Foundation
import HTTP
import MoonRunnerTestSupport
import RunCore
import RunStore
import Testing
import Wire

/// An app's retry queue against `kill -9`: every position is sent until it gets a 2xx, the server dies mid-run
/// and comes back on the same port; every position ends up stored exactly once and the run measures the same.
@Suite(.mayBlock) struct DeviceCrashTests {
    /// A gently winding route at 3 m/s, one fix a second from now.
    static func route(count: Int, start: Double) -> [Fix] {
        (0..<count).map { index in
            let t = Double(index)
            return Fix(latitude: 48.85 + t * 3 / 111_229 + sin(t / 40) * 0.0002, longitude: 2.35 + sin(t / 25) * 0.0003,
                       accuracy: 5, timestamp: start + t)
        }
    }

    /// Sends one position until the server answers 2xx; returns the attempts it took.
    static func sendUntilAccepted(_ fix: Fix, token: String, port: UInt16, deadline: Date) throws -> Int {
        var attempts = 0
        while Date() < deadline {
            attempts += 1
            do {
                let client = try HTTPTestClient(port: port)
                defer { client.close() }
                let answer = try client.get("/osmand?id=\(token)&timestamp=\(Int64(fix.timestamp))&lat=\(fix.latitude)"
                                            + "&lon=\(fix.longitude)&accuracy=5", timeout: 5)
                if (200..<300).contains(answer.status) { return attempts }
            } catch {
                // Refused or cut off: the app keeps the position and tries again (the server is restarting).
            }
            usleep(20_000)  // an app's retry interval; there is no event to wait for on a dead server
        }
        throw TestClient.Unexpected(expected: "a 2xx before the deadline", got: "\(attempts) attempts")
    }

    @Test func killNineMidRunLosesNoPositionAndStoresNoneTwice() async throws {
        try await onItsOwnThread {
            let folder = temporaryFolder()
            let database = folder.appendingPathComponent("device-crash.sqlite").path
            let start = Date().timeIntervalSince1970.rounded(.down)
            let route = Self.route(count: 400, start: start)
            let killAfter = Int.random(in: 80...320)
            var reference = RunTracker()
            for fix in route { _ = reference.add(fix, now: fix.timestamp) }
            let expected = reference.finish().distance

            let first = try ChildProcess(["serve", "--port", "0", "--http-port", "0", "--db", database])
            let httpPort = try first.httpPort()
            let phone = try TestClient(port: try first.listeningPort())
            try phone.send("iam:ann")
            let key = try #require(try OkEvent(event: Event.parse(phone.expectNext("ok:iam")))["key"])
            try phone.send("device:")
            let token = try #require(try OkEvent(event: Event.parse(phone.expect("ok:device")))["token"])
            phone.close()

            let deadline = Date().addingTimeInterval(120)
            for fix in route[..<killAfter] { _ = try Self.sendUntilAccepted(fix, token: token, port: httpPort, deadline: deadline) }
            first.signal(SIGKILL)
            _ = first.awaitExit()
            // Back on the same HTTP port (the app's URL does not change).
            let second = try ChildProcess(["serve", "--port", "0", "--http-port", String(httpPort), "--db", database])
            defer { second.signal(SIGTERM); _ = second.awaitExit() }
            _ = try second.httpPort()
            for fix in route[killAfter...] { _ = try Self.sendUntilAccepted(fix, token: token, port: httpPort, deadline: deadline) }
            // The app resends what it had in flight at the kill: nothing is stored twice.
            for fix in route[max(0, killAfter - 3)..<killAfter] {
                _ = try Self.sendUntilAccepted(fix, token: token, port: httpPort, deadline: deadline)
            }

            let runner = try TestClient(port: try second.listeningPort())
            try runner.send("iam:ann \(key)")
            let ok = try OkEvent(event: Event.parse(runner.expectNext("ok:iam")))
            let runID = try #require(ok["resumed"].flatMap { Int64($0) }, "the run survived the crash")
            try runner.send("stop:")
            let end = try RunEndedEvent(event: Event.parse(runner.expect("end:ann")))
            #expect(abs(end.distance - expected) < 0.01, "killed after \(killAfter): \(end.distance) vs \(expected)")
            second.signal(SIGTERM)
            #expect(second.awaitExit() == 0)

            let store = try SQLiteRunStore(path: database)
            defer { store.close() }
            let timestamps = try store.fixes(ofRun: runID).map(\.fix.timestamp)
            #expect(Set(timestamps).count == timestamps.count, "every position exactly once")
            #expect(timestamps.count == route.count, "every position kept (killed after \(killAfter))")
        }
    }
}
