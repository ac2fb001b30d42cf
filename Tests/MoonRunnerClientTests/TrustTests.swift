import Foundation
import MoonRunnerClient
import MoonRunnerTestSupport
import Reactor
import Synchronization
import Testing
import Wire

/// What a new user found: counts right after `send`, replies matched by order, and calls that end when cancelled.
@Suite(.mayBlock, .serialized) struct TrustTests {
    /// A client joined as `ann` on a fake server that never acks.
    static func joined() async throws -> (MoonRunnerClient, FakePeer, FakeServer) {
        let fake = try FakeServer()
        let client = MoonRunnerClient(host: "127.0.0.1", port: fake.port)
        async let key = client.join(name: "ann")
        let peer = try await fake.accepted()
        #expect(try await peer.line() == "iam:ann")
        try peer.send(["ok:iam name=ann key=0123456789abcdef0123456789abcdef new=yes"])
        _ = try await key
        return (client, peer, fake)
    }

    @Test func theUnacknowledgedCountIsRightRightAfterEverySend() async throws {
        let (client, peer, fake) = try await Self.joined()
        defer { client.close(); fake.close() }
        // The I/O thread is held inside a delegate call while 300 fixes are sent, then let go: it catches up
        // with the queued fixes, as a busy phone's would. Halfway through them it tells a second client's
        // delegate that it connects, and that delegate reads the first client's count.
        let gate = BlockingDelegate()
        client.delegate = gate
        try peer.send(["msg:ann from=anon text=hold"])
        await gate.entered()
        let probe = MoonRunnerClient(configuration: ClientConfiguration(
            host: "127.0.0.1", port: fake.port, reconnect: ReconnectPolicy(isEnabled: false)))
        defer { probe.close() }
        let reader = CountReader { client.unacknowledgedFixCount }
        probe.delegate = reader
        let fixes = straightFixes(count: 300)
        var wrong: [(sent: Int, counted: Int)] = []
        for (index, fix) in fixes.enumerated() {
            if index == 150 { probe.connect() }
            try client.send(fix)
            let counted = client.unacknowledgedFixCount
            if counted != index + 1 { wrong.append((index + 1, counted)) }
        }
        gate.release.signal()
        #expect(wrong.isEmpty, "counts behind the sends: \(wrong.prefix(5))")
        #expect(try await offPool { reader.read() } == 300, "no ack came, so all 300 are unacknowledged")
        let lines = try await peer.lines(300)
        #expect(lines.allSatisfy { $0.hasPrefix("loc:") })
        #expect(client.unacknowledgedFixCount == 300)
        try peer.send(["ack:ann ts=\(NumberFormat.plain(fixes[99].timestamp))"])
        try await waitUntil { client.unacknowledgedFixCount == 200 }
    }

    @Test func aStrayStorageErrorDoesNotFailTheHistoryRequestBehindAPing() async throws {
        let (client, peer, fake) = try await Self.joined()
        defer { client.close(); fake.close() }
        let log = EventRecorder(client)
        async let pinged: Void = client.ping()
        #expect(try await peer.line() == "ping:")
        async let details = client.run(id: 17)
        #expect(try await peer.line() == "run:17")
        // A batch of the runner's fixes failed: pushed, it answers no command; then the replies, in order.
        try peer.send([
            "err:storage \"storage failed; fixes kept until acked: disk full\"",
            "ok:ping",
            "summary:ann run=17 status=saved date=2024-11-30T08:00:00Z dist=1000.00 time=300.0 moving=300.0 pace=300.0 filtered=0",
            "split:ann unit=km n=1 time=300.0 pace=300.0 at=300.0",
            "done:run count=2 more=no",
        ])
        try await pinged
        let run = try await details
        #expect(run.summary.runID == 17 && run.splits.count == 1)
        // The split belongs to the answer: it is not published as a live event.
        try await log.first("the error") { $0.kind == "err" }
        #expect(!log.events.contains { $0.kind == "split" })
    }

    @Test func aCheersNotFoundFailsTheCheerNotTheRunBeforeIt() async throws {
        let (client, peer, fake) = try await Self.joined()
        defer { client.close(); fake.close() }
        let log = EventRecorder(client)
        async let details = client.run(id: 17)
        #expect(try await peer.line() == "run:17")
        let cheer = Task { try await client.cheer("go") }
        #expect(try await peer.line() == "msg:go")
        try peer.send([
            "summary:ann run=17 status=saved date=2024-11-30T08:00:00Z dist=1000.00 time=300.0 moving=300.0 pace=300.0 filtered=0",
            "badge:ann id=atmosphere name=\"Atmosphere\" tier=earned dist=804.67 time=241.0 speed=3.339 lat=48.8600000 lon=2.3500000 ts=1732950241.000",
            "done:run count=2 more=no",
            "err:not_found \"nobody to cheer\"",
        ])
        #expect(try await details.badges.count == 1)
        let result = await cheer.result
        #expect(throws: MoonRunnerClientError.server(code: .notFound, reason: "nobody to cheer")) { try result.get() }
        #expect(!log.events.contains { $0.kind == "badge" })
    }

    @Test func aRunThatEndsBeforeItsStopIsAnsweredEndsTheStopAndIsNotStoppedAgain() async throws {
        let fake = try FakeServer()
        defer { fake.close() }
        let client = MoonRunnerClient(configuration: ClientConfiguration(
            port: fake.port, reconnect: ReconnectPolicy(initialDelay: 0.02, maximumDelay: 0.2, jitter: 0)))
        defer { client.close() }
        let key = "0123456789abcdef0123456789abcdef"
        async let joined = client.join(name: "ann")
        var peer = try await fake.accepted()
        #expect(try await peer.line() == "iam:ann")
        try peer.send(["ok:iam name=ann key=\(key) new=yes"])
        _ = try await joined
        let pinging = Task { try await client.ping() }
        #expect(try await peer.line() == "ping:")
        let stopping = Task { try await client.stop() }
        #expect(try await peer.line() == "stop:")
        // The server ended the run by itself before it read the stop:, then the connection dropped.
        try peer.send(["end:ann run=17 dist=15.00 time=5.0 moving=5.0 pace=333.3 saved=yes reason=shutdown filtered=0"])
        #expect(try await stopping.value.reason == .shutdown)
        peer.close()
        peer = try await fake.accepted()
        #expect(try await peer.lines(2) == ["iam:ann \(key)", "ping:"])
        try peer.send(["ok:iam name=ann key=\(key)", "ok:ping"])
        try await pinging.value
        let stats = Task { try await client.statistics() }
        let next = try await peer.line()
        #expect(next == "stats:", "the ended run's stop: is not sent again")
        guard next == "stats:" else { return stats.cancel() }
        try peer.send(["stats:server connections=1"])
        _ = try await stats.value
    }

    @Test func joinEndsWhenItsTaskIsCancelled() async throws {
        let fake = try FakeServer()
        let port = fake.port
        fake.close()  // nobody listens: every attempt is refused, the client keeps retrying
        let client = MoonRunnerClient(host: "127.0.0.1", port: port)
        defer { client.close() }
        let log = EventRecorder(client)
        let join = Task { try await client.join(name: "ann") }
        try await log.first("a refused attempt") {
            if case .state(.waitingToReconnect) = $0 { true } else { false }
        }
        join.cancel()
        let outcome = try await withDeadline(seconds: 10) { await join.result }
        #expect(throws: MoonRunnerClientError.cancelled) { try outcome.get() }
    }

    @Test func aConnectThatHangsTimesOutAndTheJoinFails() async throws {
        let full = try FullListener()
        defer { full.close() }
        let client = MoonRunnerClient(configuration: ClientConfiguration(
            host: "127.0.0.1", port: full.port, reconnect: ReconnectPolicy(maximumAttempts: 1), connectTimeout: 0.3))
        defer { client.close() }
        let log = EventRecorder(client)
        let outcome = try await withDeadline(seconds: 20) { () -> Result<String, MoonRunnerClientError> in
            do throws(MoonRunnerClientError) { return .success(try await client.join(name: "ann")) } catch { return .failure(error) }
        }
        // The attempt's own timer or the socket's share of the same budget, whichever notices first.
        guard case .failure(.connectionFailed(let why)) = outcome else {
            Issue.record("\(outcome)")
            return
        }
        #expect(why.lowercased().contains("timed out"), "\(why)")
        let retried = log.events.contains {
            if case .state(.waitingToReconnect(attempt: 1, _, reason: let reason)) = $0 { reason.contains("timed out") } else { false }
        }
        #expect(retried, "\(log.events)")
    }

    @Test func historyEndsWhenItsTaskIsCancelled() async throws {
        let (client, peer, fake) = try await Self.joined()
        defer { client.close(); fake.close() }
        let board = Task { try await client.badges(of: "bob") }
        #expect(try await peer.line() == "badges:bob")
        board.cancel()
        let outcome = try await withDeadline(seconds: 10) { await board.result }
        #expect(throws: MoonRunnerClientError.cancelled) { try outcome.get() }
        // The answer arriving later is taken as the cancelled request's: the next request gets its own.
        async let pinged: Void = client.ping()
        #expect(try await peer.line() == "ping:")
        try peer.send(["done:badges count=0 more=no", "ok:ping"])
        try await pinged
    }
}

/// A listener whose accept queue is full: the kernel drops further SYNs, so a connect hangs (until the
/// kernel's own two-minute limit) — a server that is there but cannot answer.
final class FullListener: Sendable {
    let listener: ListeningSocket
    let filler: StreamSocket
    var port: UInt16 { listener.port }

    init() throws {
        // Backlog 0 queues one connection on Linux; the filler takes it and nobody accepts.
        listener = try ListeningSocket(host: "127.0.0.1", port: 0, backlog: 0)
        filler = try StreamSocket.connect(host: "127.0.0.1", port: listener.port)
    }

    func close() {
        filler.close()
        listener.close()
    }
}

/// Holds the I/O thread in the first cheer callback until released — at most 5 s, since every client of the
/// test process shares that thread. Tells an async waiter when it holds it (no Dispatch thread needed, which a
/// busy pool might not give while the I/O thread is held).
final class BlockingDelegate: MoonRunnerClientDelegate {
    private let holding = Mutex<(held: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))
    let release = DispatchSemaphore(value: 0)

    func client(_ client: MoonRunnerClient, didReceiveCheer event: CheerEvent) {
        let waiter = holding.withLock { state -> CheckedContinuation<Void, Never>? in
            state.held = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
        _ = release.wait(timeout: .now() + 5)
    }

    /// Returns once the I/O thread is held.
    func entered() async {
        await withCheckedContinuation { continuation in
            let held = holding.withLock { state -> Bool in
                if !state.held { state.waiter = continuation }
                return state.held
            }
            if held { continuation.resume() }
        }
    }
}

/// Reads a count (on the I/O thread) when its client starts connecting.
final class CountReader: MoonRunnerClientDelegate {
    private let count: @Sendable () -> Int
    private let done = DispatchSemaphore(value: 0)
    private let value = Mutex<Int?>(nil)
    init(_ count: @escaping @Sendable () -> Int) { self.count = count }

    func client(_ client: MoonRunnerClient, didChangeState state: ConnectionState) {
        guard state == .connecting else { return }
        let first = value.withLock { value -> Bool in
            guard value == nil else { return false }
            value = count()
            return true
        }
        if first { done.signal() }
    }

    /// The count read, waiting up to 10 s for it (-1 if it never came).
    func read() -> Int {
        guard done.wait(timeout: .now() + 10) == .success else { return -1 }
        return value.withLock { $0 } ?? -1
    }
}

/// Polls `condition` (for state that changes on another thread without an event), failing after `seconds`.
func waitUntil(seconds: Double = 10, _ condition: @escaping @Sendable () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        guard Date() < deadline else { throw DeadlineExceeded() }
        await Task.yield()
        try await Task.sleep(for: .milliseconds(5))
    }
}

struct DeadlineExceeded: Error {}

/// `body`'s value, or `DeadlineExceeded` after `seconds` (the body keeps running then: tests fail, not hang).
func withDeadline<T: Sendable>(seconds: Double, _ body: @escaping @Sendable () async -> T) async throws -> T {
    let slot = ContinuationSlot<T>()
    return try await withCheckedThrowingContinuation { continuation in
        slot.set(continuation)
        Task {
            let value = await body()
            slot.take()?.resume(returning: value)
        }
        Task {
            try? await Task.sleep(for: .seconds(seconds))
            slot.take()?.resume(throwing: DeadlineExceeded())
        }
    }
}

/// One continuation, resumed by whoever takes it first.
final class ContinuationSlot<T: Sendable>: Sendable {
    private let slot = Mutex<CheckedContinuation<T, any Error>?>(nil)
    func set(_ continuation: CheckedContinuation<T, any Error>) { slot.withLock { $0 = continuation } }
    func take() -> CheckedContinuation<T, any Error>? { slot.withLock { $0.take() } }
}
