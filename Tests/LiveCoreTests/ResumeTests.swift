import LiveCore
import Foundation
import RunStore
import MoonRunnerTestSupport
import Testing
import Wire

/// A runner who drops off the network comes back with the key and the run goes on.
@Suite struct ResumeTests {
    @Test func aRunnerResumesTheSameRunWithTheKey() throws {
        try withPureServer { server in
            let watcher = server.connect()
            try watcher.send("watch:ann")
            try watcher.expectNext("ok:watch")
            let (phone, key) = try connectRunner("ann", to: server)
            let fixes = straightRun(count: 20)
            for line in fixes[..<10] { try phone.send(line) }
            let started = try RunStartedEvent(event: Event.parse(phone.expect("run:ann")))
            try phone.lines(until: "tenth pace") { $0.hasPrefix("pace:ann") && $0.contains("ts=\(fixes[9].split(separator: ",").last!) ") }
            phone.close()

            let again = server.connect()
            try again.send("iam:ann \(key)")
            let ok = try OkEvent(event: Event.parse(again.expectNext("ok:iam")))
            #expect(ok["resumed"] == String(started.runID))
            // The runner's screen comes back: the run and its latest pace.
            try again.expectNext("run:ann")
            try again.expect("pace:ann")
            // A resend of fixes the server has is skipped without error; new ones continue the run.
            for line in fixes[5...] { try again.send(line) }
            try again.send("stop:")
            let end = try RunEndedEvent(event: Event.parse(again.expect("end:ann")))
            #expect(end.runID == started.runID)
            #expect(!again.received.contains { $0.hasPrefix("err:") })
            try watcher.expect("end:ann")
            let paces = watcher.received.filter { $0.hasPrefix("pace:ann") }
            #expect(paces.count == 20, "each fix counted once")
            #expect(end.filteredCount == 0)
            #expect(abs(end.distance - 19 * 3) < 3)
        }
    }

    @Test func aRunWhoseRunnerNeverComesBackEndsAfterTheWindow() throws {
        try withPureServer({ $0.resumeWindow = 0.5 }) { server in
            let coach = server.connect()
            try coach.send("coach:ann")
            try coach.expectNext("ok:coach")
            let (phone, _) = try connectRunner("ann", to: server)
            for line in straightRun(count: 5) { try phone.send(line) }
            try phone.expect("pace:ann")
            phone.close()
            let end = try RunEndedEvent(event: Event.parse(coach.expect("end:ann", timeout: 5)))
            #expect(end.saved && end.reason == .timeout)
        }
    }

    @Test func aNewConnectionWithTheKeyReplacesAStaleOne() throws {
        try withPureServer { server in
            let (old, key) = try connectRunner("ann", to: server)
            try old.send(straightRun(count: 1)[0])
            try old.expect("run:ann")
            let fresh = server.connect()
            try fresh.send("iam:ann \(key)")
            try fresh.expectNext("ok:iam")
            #expect(try old.awaitClose().contains { $0.hasPrefix("err:replaced") })
            try fresh.send("stop:")
            try fresh.expect("end:ann")
        }
    }

    @Test func acksFollowCommitsAndCoverTheNewestFix() throws {
        try withPureServer { server in
            let (phone, _) = try connectRunner("ann", to: server)
            let fixes = straightRun(count: 8)
            for line in fixes { try phone.send(line) }
            let newest = String(fixes.last!.split(separator: ",").last!)
            try phone.lines(until: "ack of the newest fix") { $0 == "ack:ann ts=\(newest)" }
        }
    }
}

/// Resending everything after a reconnect stores nothing twice, filtered fixes included.
@Suite struct ResendTests {
    @Test func aResentFilteredFixIsNotStoredTwice() throws {
        let store = MemoryRunStore()
        try withPureServer(store: store) { server in
            let (phone, key) = try connectRunner("ann", to: server)
            var fixes = straightRun(count: 12)
            // Fix 6 is a 2 km jump: filtered, stored with its reason, and acked once its batch commits.
            let parts = fixes[6].split(separator: ",")
            fixes[6] = "loc:\(Double(parts[0].dropFirst(4))! + 0.02),\(parts[1]),\(parts[2]),\(parts[3])"
            // The connection drops right after the filtered fix, so it is the newest the run has.
            for line in fixes[..<7] { try phone.send(line) }
            try phone.lines(until: "ack of the filtered fix") { $0 == "ack:ann ts=\(fixes[6].split(separator: ",")[3])" }
            phone.close()
            let again = server.connect()
            try again.send("iam:ann \(key)")
            let runID = try #require(try OkEvent(event: Event.parse(again.expectNext("ok:iam")))["resumed"].flatMap { Int64($0) })
            for line in fixes { try again.send(line) }
            try again.send("stop:")
            let end = try RunEndedEvent(event: Event.parse(again.expect("end:ann")))
            #expect(end.filtered == ["jump": 1])
            store.flush()
            let stored = try store.fixes(ofRun: runID)
            #expect(stored.count == 12)
            #expect(Set(stored.map(\.fix.timestamp)).count == 12)
            #expect(stored.filter { $0.rejection == .jump }.count == 1)
        }
    }

    @Test func aFarFutureFixNeitherHidesLaterFixesNorIsAcked() throws {
        try withPureServer { server in
            let (phone, _) = try connectRunner("ann", to: server)
            let fixes = straightRun(count: 10)
            let future = Int(Date().timeIntervalSince1970) + 10 * 86_400
            for line in fixes[..<5] { try phone.send(line) }
            try phone.send("loc:51.5,-0.12,5,\(future)")
            for line in fixes[5...] { try phone.send(line) }
            try phone.send("stop:")
            let end = try RunEndedEvent(event: Event.parse(phone.expect("end:ann")))
            #expect(end.filtered == ["future": 1])
            #expect(phone.received.filter { $0.hasPrefix("pace:ann") }.count == 10)
            #expect(abs(end.elapsed - 9) < 0.5)
            try phone.send("ping:")
            try phone.expect("ok:ping")
            #expect(!phone.received.contains { $0 == "ack:ann ts=\(future)" }, "no ack covers what is not stored")
        }
    }
}
