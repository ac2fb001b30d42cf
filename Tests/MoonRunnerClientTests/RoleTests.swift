import Broadcaster
import Foundation
import MoonRunnerClient
import MoonRunnerTestSupport
import RunCore
import RunStore
import Testing
import Synchronization
import Wire
#if canImport(Glibc)
import Glibc
#endif

/// The client against the real server: typed events for a runner, a spectator and a coach.
@Suite(.mayBlock) struct RoleTests {
    @Test func aRunnerJoinsRunsIsAcknowledgedAndStops() async throws {
        let store = MemoryRunStore()
        try await withServer(store: store) { server in
            let client = MoonRunnerClient(host: "127.0.0.1", port: server.port)
            defer { client.close() }
            let log = EventRecorder(client)
            let key = try await client.join(name: "ann")
            #expect(key.count == 32 && key.allSatisfy(\.isHexDigit))
            #expect(client.key == key && client.name == "ann")

            let fixes = straightFixes(count: 30)
            for fix in fixes { try client.send(fix) }
            let last = NumberFormat.plain(fixes.last!.timestamp)
            let started = try await log.first("run:ann") { $0.kind == "run" }
            _ = try await log.pace(of: "ann", at: last)
            try await log.first("ack of the last fix") {
                if case .ack(let ack) = $0 { return ack.timestamp == last }
                return false
            }
            #expect(client.unacknowledgedFixCount == 0)

            let end = try await client.stop()
            guard case .runStarted(let run) = started else { return }
            #expect(end.runID == run.runID && end.saved && end.reason == .stop)
            #expect(abs(end.distance - 29 * 3) < 5)
            store.flush()
            #expect(try store.fixes(ofRun: end.runID).count == 30)
            #expect(!log.events.contains { $0.kind == "err" })
        }
    }

    @Test func aSpectatorSeesEverythingACoachOnlyRunsBadgesAndEnds() async throws {
        try await withServer { server in
            let spectator = MoonRunnerClient(host: "127.0.0.1", port: server.port)
            let coach = MoonRunnerClient(host: "127.0.0.1", port: server.port)
            let runner = MoonRunnerClient(host: "127.0.0.1", port: server.port)
            defer { [spectator, coach, runner].forEach { $0.close() } }
            let watched = EventRecorder(spectator)
            let coached = EventRecorder(coach)
            try spectator.watch("bob")
            try coach.coach(.everyone)
            try await watched.first("ok:watch") { if case .ok(let ok) = $0 { ok.what == "watch" } else { false } }
            try await coached.first("ok:coach") { if case .ok(let ok) = $0 { ok.what == "coach" } else { false } }

            // 10 m/s for 170 s: past the first badges (0, 805 m, 1609 m), the first kilometre and mile.
            try await runner.join(name: "bob")
            for fix in straightFixes(count: 170, speed: 10) { try runner.send(fix) }
            let end = try await runner.stop()
            try await watched.first("end:bob") { $0.kind == "end" }
            try await coached.first("end:bob") { $0.kind == "end" }

            let watchedKinds = Set(watched.events.filter { $0.runner == "bob" }.map(\.kind))
            #expect(watchedKinds.isSuperset(of: ["run", "pace", "badge", "split", "end"]))
            let coachedKinds = Set(coached.events.filter { $0.runner == "bob" }.map(\.kind))
            #expect(coachedKinds == ["run", "badge", "end"])
            let badges = coached.events.compactMap { event -> BadgeEvent? in
                if case .badge(let badge) = event { return badge }
                return nil
            }
            #expect(badges.map(\.badgeID).prefix(3) == ["earth", "atmosphere", "moon"])
            #expect(badges.last?.badgeName == Badges.badge(id: "moon")?.name)
            #expect(end.distance > 1609)
        }
    }

    @Test func cheersReachTheRunnerThroughTheDelegate() async throws {
        try await withServer { server in
            let runner = MoonRunnerClient(host: "127.0.0.1", port: server.port)
            let fan = MoonRunnerClient(host: "127.0.0.1", port: server.port)
            defer { runner.close(); fan.close() }
            let delegate = CheerCollector()
            runner.delegate = delegate
            try await runner.join(name: "cat")
            // Listening before the fixes go out, so the run's first events cannot slip past the recorder.
            let log = EventRecorder(runner)
            for fix in straightFixes(count: 3) { try runner.send(fix) }
            _ = try await log.first("run:cat") { $0.kind == "run" || $0.kind == "pace" }
            try fan.watch("cat")
            let count = try await fan.cheer("Allez Cat !")
            #expect(count == 1)
            let cheer = try await log.first("msg:cat") { $0.kind == "msg" }
            #expect(cheer == .cheer(CheerEvent(runner: "cat", from: "anon", text: "Allez Cat !")))
            #expect(delegate.cheers == ["Allez Cat !"])
            #expect(delegate.onIOThread)
        }
    }
}

/// A delegate that keeps the cheers it is told about.
final class CheerCollector: MoonRunnerClientDelegate {
    private let state = Mutex<(cheers: [String], threads: Set<String>)>(([], []))
    var cheers: [String] { state.withLock { $0.cheers } }
    /// Every callback came on one thread, and not the main thread.
    var onIOThread: Bool { state.withLock { $0.threads.count == 1 && !$0.threads.contains("main") } }

    func client(_ client: MoonRunnerClient, didReceiveCheer event: CheerEvent) {
        let thread = Thread.isMainThread ? "main" : "\(pthread_self())"
        state.withLock {
            $0.cheers.append(event.text)
            $0.threads.insert(thread)
        }
    }
}
