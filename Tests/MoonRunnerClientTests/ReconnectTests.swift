import Broadcaster
import Foundation
@testable import MoonRunnerClient
import MoonRunnerTestSupport
import RunCore
import RunStore
import Testing
import Wire

/// Dropped connections: reconnect with the key, re-subscribe, resend what was not acknowledged.
@Suite(.mayBlock, .serialized) struct ReconnectTests {
    static let quickReconnect = ReconnectPolicy(initialDelay: 0.02, maximumDelay: 0.2, jitter: 0)

    @Test func afterADropTheClientIdentifiesResubscribesAndResendsOnlyUnackedFixes() async throws {
        let fake = try FakeServer()
        defer { fake.close() }
        let client = MoonRunnerClient(configuration: ClientConfiguration(port: fake.port, reconnect: Self.quickReconnect))
        defer { client.close() }
        let log = EventRecorder(client)
        let key = String(repeating: "ab", count: 16)

        client.connect()  // from this thread: the I/O thread connects whatever the task pool is doing
        let joining = Task { try await client.join(name: "ann") }
        var peer = try await fake.accepted()
        #expect(try await peer.line() == "iam:ann")
        try peer.send(["ok:iam name=ann key=\(key) new=yes"])
        #expect(try await joining.value == key)

        try client.watch("bob")
        #expect(try await peer.line() == "watch:bob")
        let fixes = straightFixes(count: 6)
        for fix in fixes { try client.send(fix) }
        let sent = try await peer.lines(6)
        let lines = fixes.map { Command.location(LocationCommand(latitude: $0.latitude, longitude: $0.longitude,
                                                                 accuracy: $0.accuracy, timestamp: $0.timestamp)).line }
        #expect(sent == lines)
        let ackedText = NumberFormat.plain(fixes[3].timestamp)
        try peer.send(["ack:ann ts=\(ackedText)"])
        try await log.first("ack") { $0.kind == "ack" }
        #expect(client.unacknowledgedFixCount == 2)
        peer.close()

        // Second connection: identity and subscriptions at once, the fixes after ok:iam, stop after them.
        peer = try await fake.accepted()
        #expect(try await peer.lines(2) == ["iam:ann \(key)", "watch:bob"])
        let stopping = Task { try await client.stop() }
        try peer.send(["ok:iam name=ann resumed=17", "ok:watch target=bob"])
        #expect(try await peer.lines(3) == Array(lines[4...]) + ["stop:"])
        try peer.send(["end:ann run=17 dist=15.00 time=5.0 moving=5.0 pace=333.3 saved=yes reason=stop filtered=0"])
        let end = try await stopping.value
        #expect(end.runID == 17)
        #expect(client.unacknowledgedFixCount == 0)
        let states = log.events.compactMap { event -> ConnectionState? in
            if case .state(let state) = event { return state }
            return nil
        }
        #expect(states.contains { state in
            if case .waitingToReconnect(attempt: 1, delay: 0.02, reason: let reason) = state { !reason.isEmpty } else { false }
        })
        #expect(states.filter { $0 == .connected }.count == 2)
    }

    @Test func aRunSurvivesTheNetworkDroppingWithNoFixLostOrDuplicated() async throws {
        let store = MemoryRunStore()
        try await withServer(store: store) { server in
            let proxy = try TCPProxy(to: server.port)
            defer { proxy.stop() }
            let client = MoonRunnerClient(configuration: ClientConfiguration(port: proxy.port, reconnect: Self.quickReconnect))
            defer { client.close() }
            let log = EventRecorder(client)
            try await client.join(name: "dan")
            let fixes = straightFixes(count: 60)
            for fix in fixes[..<20] { try client.send(fix) }
            _ = try await log.pace(of: "dan", at: NumberFormat.plain(fixes[19].timestamp))
            // Cut while fixes are in flight: some reach the server, some do not, none is acked yet.
            for fix in fixes[20..<40] { try client.send(fix) }
            proxy.cut()
            for fix in fixes[40...] { try client.send(fix) }
            try await log.first("resumed") {
                if case .ok(let ok) = $0 { return ok.what == "iam" && ok["resumed"] != nil }
                return false
            }
            let end = try await client.stop()
            #expect(proxy.acceptedCount >= 2)
            store.flush()
            let stored = try store.fixes(ofRun: end.runID)
            let timestamps = stored.map(\.fix.timestamp)
            #expect(timestamps == fixes.map(\.timestamp), "every fix stored once, in order")
            #expect(end.filteredCount == 0)
            let runs = log.events.compactMap { event -> Int64? in
                if case .runStarted(let run) = event { return run.runID }
                return nil
            }
            #expect(Set(runs) == [end.runID], "one run, resumed")
        }
    }

    @Test func acksCompareTimestampsAsNumbers() {
        var unacked = UnackedFixes()
        for timestamp in [998.5, 999.5, 1000, 1000.25, 1001] {
            unacked.append(LocationCommand(latitude: 1, longitude: 2, accuracy: 5, timestamp: timestamp))
        }
        // As text "1000" < "999.5"; as numbers it covers 998.5, 999.5 and 1000.
        #expect(unacked.acknowledge("1000") == 3)
        #expect(unacked.fixes.map(\.timestamp) == [1000.25, 1001])
        #expect(unacked.acknowledge("not a number") == 0)
        #expect(unacked.acknowledge("1001.0") == 2 && unacked.isEmpty)
    }

    @Test func backoffDoublesUpToTheMaximumWithBoundedJitter() {
        let policy = ReconnectPolicy()
        #expect((1...7).map { policy.baseDelay(attempt: $0) } == [0.2, 0.4, 0.8, 1.6, 3.2, 5, 5])
        var generator = SystemRandomNumberGenerator()
        for attempt in 1...7 {
            let delay = policy.delay(attempt: attempt, using: &generator)
            let base = policy.baseDelay(attempt: attempt)
            #expect(delay >= base * 0.8 && delay <= base * 1.2)
        }
    }

    @Test func givingUpFailsWaitingCallsWithConnectionFailed() async throws {
        let fake = try FakeServer()
        let port = fake.port
        fake.close()  // nothing listens there now
        let policy = ReconnectPolicy(initialDelay: 0.01, jitter: 0, maximumAttempts: 2)
        let client = MoonRunnerClient(configuration: ClientConfiguration(port: port, reconnect: policy))
        await #expect(throws: MoonRunnerClientError.self) { try await client.runs(of: "ann") }
        guard case .failed(.connectionFailed) = client.state else {
            Issue.record("state is \(client.state)")
            return
        }
        // Later calls fail at once with the same error.
        do {
            try await client.ping()
            Issue.record("ping succeeded")
        } catch {
            guard case .connectionFailed = error else { Issue.record("got \(error)"); return }
        }
    }
}
