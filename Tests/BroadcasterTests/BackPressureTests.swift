import Broadcaster
import Foundation
import MoonRunnerTestSupport
import RunStore
import Testing
import Wire

/// Bounded work per turn and per store: a slow store stops the reading, one connection's flood does not hold
/// up another's lines.
@Suite(.mayBlock) struct BackPressureTests {
    @Test func aBackloggedStoreStopsTheReadingUntilItCatchesUp() async throws {
        try await onItsOwnThread {
            let store = BackloggedStore()
            try withServer({ $0.storeQueueHighWater = 1000; $0.storeQueueLowWater = 100 }, store: store) { server in
                let (ann, _) = try connectRunner("ann", to: server)
                try ann.send("ping:")
                try ann.expectNext("ok:ping")
                store.pretendBacklog(5000)
                let run = straightRun(count: 300)
                try ann.write(Array(run.map { $0 + "\n" }.joined().utf8))
                try settleLoop(of: server)
                try settleLoop(of: server)
                // At most one check's worth of lines (64) went through before the server noticed.
                let seen = ann.received.filter { $0.hasPrefix("pace:ann") }.count
                #expect(seen <= 64, "\(seen) fixes handled with the store backlogged")
                // The store catches up: the next commit resumes the reading, and every fix is handled.
                store.pretendBacklog(nil)
                let (bob, _) = try connectRunner("bob", to: server)  // a claim is a write: a commit follows
                bob.close()
                let stamp = run.last!.split(separator: ",").last!
                try ann.lines(until: "the last fix's pace", timeout: 20) { $0.hasPrefix("pace:ann") && $0.contains("ts=\(stamp)") }
            }
        }
    }

    @Test func oneConnectionsFloodWaitsItsTurnAndOthersAreServedMeanwhile() async throws {
        try await onItsOwnThread {
            try withServer({ $0.linesPerTurn = 32 }) { server in
                let (ann, _) = try connectRunner("ann", to: server)
                let asker = try TestClient(port: server.port)
                try asker.send("ping:")
                try asker.expectNext("ok:ping")
                // 20,000 fixes in one write (as a phone replaying its backlog), then one line from someone else.
                let flood = straightRun(count: 20_000, speed: 3)
                try ann.write(Array(flood.map { $0 + "\n" }.joined().utf8))
                try asker.send("stats:")
                let stats = try StatsEvent(event: Event.parse(asker.expect("stats:server", timeout: 20)))
                // The asker's line waited for one turn of the flood, not for all of it.
                let accepted = stats["fixes_accepted"] ?? 0
                #expect(accepted < 2_000, "the flood had \(accepted) of 20,000 fixes handled before another's line")
                let stamp = flood.last!.split(separator: ",").last!
                try ann.lines(until: "the flood's last pace", timeout: 60) { $0.hasPrefix("pace:ann") && $0.contains("ts=\(stamp)") }
            }
        }
    }

    @Test func manyFloodsTogetherFillOneTurnOnlyUpToTheLoopsLimit() async throws {
        try await onItsOwnThread {
            try withServer({ $0.linesPerTurn = 256; $0.linesPerLoopTurn = 400 }) { server in
                // 20 phones replay 1,500 fixes each at once: each turn could take 256 lines from each of them.
                let (runners, asker, flood) = try startFloods(of: 1_500, on: server)
                func accepted() throws -> Int {
                    try asker.send("stats:")
                    return try StatsEvent(event: Event.parse(asker.expect("stats:server", timeout: 20)))["fixes_accepted"] ?? 0
                }
                let first = try accepted(), second = try accepted()
                #expect(second < 30_000, "the floods were over before the second question: nothing measured")
                // Between two of the asker's lines a turn or two of the floods: 400 lines a turn per loop, not
                // the 5,120 that 20 connections × 256 lines would make.
                // (`stats:` asks every loop: with several, each can take turns of its own meanwhile.)
                let loops = ProcessInfo.processInfo.environment["MOONRUNNER_TEST_LOOPS"].flatMap(Int.init) ?? 1
                #expect(second - first < 2_500 * max(1, loops),
                        "\(second - first) fixes handled between two lines of another client")
                try awaitTheLastPaces(of: flood, on: runners)
            }
        }
    }

    @Test func aNewcomersFirstLineIsAnsweredInTheTurnItWasAcceptedIn() async throws {
        // With several loops a newcomer may be dealt to another loop, and `stats:` adds up every loop's turns.
        let loops = ProcessInfo.processInfo.environment["MOONRUNNER_TEST_LOOPS"].flatMap(Int.init) ?? 1
        guard loops == 1 else { return }
        try await onItsOwnThread {
            try withServer({ $0.linesPerTurn = 256; $0.linesPerLoopTurn = 2_000 }) { server in
                let (runners, asker, flood) = try startFloods(of: 3_000, on: server)
                // The newcomer connects (so the listener is readable), sends its first line, then the asker
                // (an idle connection epoll reports) sends its own: both arrive within the same turn or the
                // newcomer's earlier. Each turn hands 1,500 lines to the floods before epoll's connections.
                let newcomer = try TestClient(port: server.port)
                try newcomer.send("stats:")
                try asker.send("stats:")
                func accepted(_ client: TestClient) throws -> Int {
                    try StatsEvent(event: Event.parse(client.expect("stats:server", timeout: 20)))["fixes_accepted"] ?? 0
                }
                let theNewcomers = try accepted(newcomer), theAskers = try accepted(asker)
                #expect(theAskers < 50_000, "the floods were over before the question: nothing measured")
                // Read at once when accepted, the newcomer's line is answered in that turn (the asker's in the
                // same one, or later). Read only once epoll reported it, it would wait for the next turn, after
                // the floods' 1,500 lines.
                #expect(theNewcomers - theAskers < 750,
                        "the newcomer's line was handled \(theNewcomers - theAskers) fixes after the asker's")
                try awaitTheLastPaces(of: flood, on: runners)
            }
        }
    }

    @Test func floodsThatFillEveryTurnAdvanceTogether() async throws {
        try await onItsOwnThread {
            // Turns far smaller than the floods, room in the kernel for each whole flood (so all are written
            // at once) and for every echo (the test reads the runners last).
            try withServer({
                $0.linesPerTurn = 64; $0.linesPerLoopTurn = 300; $0.socketReceiveBuffer = 1 << 20
                $0.outputHighWaterMark = 32 << 20; $0.outputHardLimit = 64 << 20
            }) { server in
                // All on one loop: the round robin is each loop's own (with several, each runs on its own
                // thread, at its own pace).
                let loops = ProcessInfo.processInfo.environment["MOONRUNNER_TEST_LOOPS"].flatMap(Int.init) ?? 1
                let names = (0...).lazy.map { "even\($0)" }
                    .filter { ServerGroup.loopIndex(ofRunner: $0, loops: loops) == 0 }.prefix(10)
                let runners = try names.map { try connectRunner($0, to: server).0 }
                let asker = try TestClient(port: server.port)
                let flood = straightRun(count: 1_500, speed: 3)
                let bytes = Array(flood.map { $0 + "\n" }.joined().utf8)
                for runner in runners { try runner.write(bytes) }
                // Once the leader is half-way, everyone is well on the way: each turn goes on with the
                // connections the last one did not reach, none is left waiting at the back for ever.
                var distances: [Double] = []
                let deadline = Date().addingTimeInterval(60)
                while Date() < deadline {
                    try asker.send("leaders:")
                    let lines = try asker.lines(until: "done:leaders", timeout: 20) { $0.hasPrefix("done:leaders") }
                    distances = lines.filter { $0.hasPrefix("leader:even") }.compactMap { line in
                        line.split(separator: " ").first { $0.hasPrefix("dist=") }.flatMap { Double($0.dropFirst(5)) }
                    }
                    if distances.count == 10, let top = distances.max(), top >= 2_000 { break }
                }
                #expect(distances.count == 10, "\(distances)")
                let (low, high) = (distances.min() ?? 0, distances.max() ?? 1)
                #expect(high < 4_400, "the floods were over before they could be compared: \(distances)")
                #expect(low >= 0.5 * high, "uneven progress: \(distances)")
                try awaitTheLastPaces(of: flood, on: runners)
            }
        }
    }

    /// 20 runners (`flood0`...) each write `count` fixes at once; returns them, an idle asker, and the fixes,
    /// once the last runner's first pace came (the floods are under way).
    private func startFloods(of count: Int, on server: Server) throws -> ([TestClient], TestClient, [String]) {
        let runners = try (0..<20).map { try connectRunner("flood\($0)", to: server).0 }
        let asker = try TestClient(port: server.port)
        try asker.send("ping:")
        try asker.expectNext("ok:ping")
        let flood = straightRun(count: count, speed: 3)
        let bytes = Array(flood.map { $0 + "\n" }.joined().utf8)
        for runner in runners { try runner.write(bytes) }
        try runners.last!.lines(until: "a first pace") { $0.hasPrefix("pace:flood19") }
        return (runners, asker, flood)
    }

    /// Every runner got the pace of the flood's last fix: nothing was lost on the way.
    private func awaitTheLastPaces(of flood: [String], on runners: [TestClient]) throws {
        let stamp = flood.last!.split(separator: ",").last!
        for runner in runners {
            try runner.lines(until: "the flood's last pace", timeout: 60) { $0.hasPrefix("pace:") && $0.contains("ts=\(stamp)") }
        }
    }
}
