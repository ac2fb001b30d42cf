import Foundation
import MoonRunnerTestSupport
import RunCore
import RunStore
import Testing
import Wire

/// Every reply that says a state changed comes after the change is committed: a `kill -9` right after the reply
/// keeps it. The store waits 2 s for more writes before it commits a batch (`--store-batch-delay 2`), so a reply
/// sent before its commit would be undone by the kill every time.
@Suite(.mayBlock) struct ReplyDurabilityTests {
    /// One server on a fresh database file, slow to commit on its own.
    struct Killable {
        let database: String
        let process: ChildProcess
        let client: TestClient
        let key: String

        /// A server with runner `ann` claimed (its claim already on disk).
        init() throws {
            database = temporaryFolder().appendingPathComponent("replies.sqlite").path
            process = try ChildProcess(["serve", "--port", "0", "--http-port", "0", "--db", database,
                                        "--store-batch-delay", "2"])
            client = try TestClient(port: try process.listeningPort())
            let ok = try OkEvent(event: Event.parse(client.ask("iam:ann", expecting: "ok:iam")))
            key = try #require(ok["key"])
        }

        /// The token of the `ok:` answer to `command`.
        func token(_ command: String, expecting answer: String) throws -> String {
            try #require(try OkEvent(event: Event.parse(client.ask(command, expecting: answer)))["token"])
        }

        /// 20 fixes of a live run, acked (so only what comes next is at stake); the run's id.
        func startRun() throws -> Int64 {
            let start = (Date().timeIntervalSince1970 - 30).rounded(.down)
            for index in 0..<20 { try client.send("loc:\(48.85 + Double(index) * 0.00003),2.35,5,\(Int(start) + index)") }
            let started = try RunStartedEvent(event: Event.parse(client.expect("run:ann")))
            _ = try client.expect("ack:ann", timeout: 10)
            return started.runID
        }

        /// `kill -9` at once, then the database as the next start would find it.
        func killed() throws -> SQLiteRunStore {
            process.signal(SIGKILL)
            _ = process.awaitExit()
            return try SQLiteRunStore(path: database)
        }
    }

    @Test func aNameAnsweredNewYesExistsAfterAKill() throws {
        let server = try Killable()
        let store = try server.killed()
        defer { store.close() }
        let ann = try #require(try store.runner(named: "ann"), "ok:iam new=yes was sent before the name was stored")
        #expect(RunnerKey.verify(server.key, against: ann.keyHash))
    }

    @Test func privateAndAPrivacyZoneSurviveAKill() throws {
        let server = try Killable()
        _ = try server.client.ask("private:on", expecting: "ok:private")
        _ = try server.client.ask("privacy:300", expecting: "ok:privacy")
        let store = try server.killed()
        defer { store.close() }
        let privacy = try #require(try store.runner(named: "ann")).privacy
        #expect(privacy.isPrivate)
        #expect(privacy.zone == 300)
    }

    @Test func aShareLinkAndItsRevocationSurviveAKill() throws {
        let server = try Killable()
        let revoked = try server.token("share:", expecting: "ok:share")
        let kept = try server.token("share:", expecting: "ok:share")
        _ = try server.client.ask("unshare:\(revoked)", expecting: "ok:unshare")
        let store = try server.killed()
        defer { store.close() }
        let hashes = try store.shareTokens().map(\.hash)
        #expect(hashes.count == 1, "the second link is stored, the first revoked: \(hashes.count)")
        #expect(hashes == [RunnerKey.hash(kept)])
    }

    @Test func aDeviceTokenAndItsRevocationSurviveAKill() throws {
        let server = try Killable()
        let revoked = try server.token("device:watch", expecting: "ok:device")
        let kept = try server.token("device:phone", expecting: "ok:device")
        _ = try server.client.ask("undevice:\(revoked)", expecting: "ok:undevice")
        let store = try server.killed()
        defer { store.close() }
        let hashes = try store.deviceTokens().map(\.hash)
        #expect(hashes == [RunnerKey.hash(kept)])
    }

    @Test func aRunEndedWithStopDiscardStaysDiscardedAfterAKill() throws {
        let server = try Killable()
        let runID = try server.startRun()
        try server.client.send("stop:discard")
        _ = try server.client.expect("end:ann")
        let store = try server.killed()
        defer { store.close() }
        let stored = try store.liveRuns().map(\.id)
        #expect(!stored.contains(runID), "the discarded run would come back as live, then timed out")
        #expect(try store.run(id: runID) == nil, "a discarded run is in no history")
    }

    @Test func thePageMadeDeviceTokenAndStopSurviveAKill() throws {
        let server = try Killable()
        let runID = try server.startRun()
        let page = try HTTPTestClient(port: try server.process.httpPort())
        let made = try page.post("/runners/ann/devices", body: "key=\(server.key)&label=watch",
                                 type: "application/x-www-form-urlencoded")
        #expect(made.status == 201)
        let token = try #require(made.text.split(separator: "\"").dropLast().last)
        let stopped = try page.post("/runners/ann/stop", body: "key=\(server.key)",
                                    type: "application/x-www-form-urlencoded")
        #expect(stopped.status == 200)
        let store = try server.killed()
        defer { store.close() }
        #expect(try store.deviceTokens().map(\.hash) == [RunnerKey.hash(String(token))])
        #expect(try store.run(id: runID)?.record.status == .saved)
    }
}
