@testable import LiveCore
import Foundation
import MoonRunnerTestSupport
import RunCore
import RunStore
import Testing
import Wire

/// A replay reads its run a page at a time: the same lines as from one page, never more than two pages held,
/// a page asked for before the last runs out, and nothing kept once the replay or its connection goes.
@Suite struct ReplayPagingTests {
    let store = MemoryRunStore()
    let output: AnsweringOutput
    let ann = ConnectionID(1), viewer = ConnectionID(2)
    let start = 1_700_000_000.0

    init() { output = AnsweringOutput(store: store) }

    func hub(pageSize: Int) -> HubDriver {
        var configuration = ServerConfiguration()
        configuration.replayPageSize = pageSize
        let hub = HubDriver(configuration: configuration, store: store, output: output)
        for id in [ann, viewer] { hub.connected(id, now: start) }
        return hub
    }

    /// ann runs 600 s at 4 m/s (badges, two kilometres) and stops; then her stored fixes are given other
    /// sequences, as a phone's late queues would have them (time order unchanged, arrival order shuffled in
    /// blocks and across the run). The run's id and its live lines.
    func shuffledRun(_ hub: HubDriver) throws -> (Int64, [String]) {
        hub.received(.identify(name: "ann", key: nil), from: ann, now: start)
        for index in 0..<600 {
            let fix = LocationCommand(latitude: 51.5 + Double(index) * 4 / 111_229, longitude: -0.12, accuracy: 5,
                                      timestamp: start + Double(index), timestampText: String(Int(start) + index))
            hub.received(.location(fix), from: ann, now: start + Double(index))
        }
        hub.received(.stop(save: true), from: ann, now: start + 600)
        let lines = output.of(ann).filter { !$0.hasPrefix("ok:") && !$0.hasPrefix("ack:") }
        let runID = try RunStartedEvent(line: try #require(lines.first)).runID
        store.flush()
        let fixes = try store.fixes(ofRun: runID)
        var sequences = fixes.map(\.sequence)
        for block in stride(from: 0, to: sequences.count - 40, by: 40) { sequences[block..<block + 40].reverse() }
        sequences.swapAt(10, sequences.count - 10)
        for (fix, sequence) in zip(fixes, sequences) {
            var moved = fix
            moved.sequence = sequence
            store.submit(.fix(moved, acknowledgement: nil))
        }
        store.flush()
        #expect(try store.fixes(ofRun: runID).map(\.fix) != fixes.map(\.fix), "arrival order is not time order")
        return (runID, lines)
    }

    /// Replays run `runID` to the viewer at `speed` as the server's timer would: called again whenever the hub
    /// asks. Its lines, and the replay (to look at once it is over).
    func replay(_ runID: Int64, on hub: HubDriver, speed: Double = 100) throws -> ([String], Replay) {
        let before = output.of(viewer).count
        hub.received(.replay(runID: runID, speed: speed), from: viewer, now: start + 1000)
        let replay = try #require(hub.replays[viewer])
        var now = start + 1000, calls = 0
        while let due = output.replaysDue {
            now = max(now, due)
            hub.advanceReplays(now: now)
            calls += 1
            try #require(calls < 100_000, "the replay never ended")
        }
        return (Array(output.of(viewer).dropFirst(before)), replay)
    }

    @Test func aRunReadInPagesIsReplayedAsFromOnePage() throws {
        let paged = hub(pageSize: 7)
        let (runID, live) = try shuffledRun(paged)
        let (lines, pages) = try replay(runID, on: paged)
        let (whole, one) = try replay(runID, on: hub(pageSize: 10_000))
        #expect(lines == whole)
        #expect(one.largestWindow > 500 && pages.largestWindow <= 2 * 7, "held \(pages.largestWindow)")
        #expect(output.replayPagesRead >= 600 / 7, "\(output.replayPagesRead) pages")
        // And the same events as live (badges at their own time: compared per kind).
        for kind in ["run:", "pace:", "split:", "badge:", "end:"] {
            #expect(lines.filter { $0.hasPrefix(kind) } == live.filter { $0.hasPrefix(kind) }, "\(kind)")
        }
        #expect(lines.last == "done:replay count=\(lines.count - 2) more=no")
    }

    @Test func aReplayWaitsForItsNextPageAndSendsNothingAheadOfIt() throws {
        let hub = hub(pageSize: 50)
        let (runID, _) = try shuffledRun(hub)
        output.holdsReplayPages = true
        hub.received(.replay(runID: runID, speed: 100), from: viewer, now: start + 1000)
        let replay = try #require(hub.replays[viewer])
        // 50 fixes are 0.5 s at 100×: the next page is asked for at once (fewer than a page would be left after
        // it), and past the first page the replay waits for it rather than end or send a badge ahead of it.
        try advance(hub, to: start + 1100)
        let waiting = output.of(viewer)
        #expect(waiting.filter { $0.hasPrefix("pace:") }.count == 50)
        #expect(!waiting.contains { $0.hasPrefix("end:") || $0.hasPrefix("done:") })
        #expect(replay.nextDue == nil && output.replaysDue == nil && !replay.isOver)
        hub.advanceReplays(now: start + 1200)
        #expect(output.of(viewer) == waiting, "nothing while the page is read")
        output.readHeldPages()
        #expect(output.replaysDue.map { $0 <= start + 1200 } == true, "lines due already: called again at once")
        try advance(hub, to: start + 1200)
        #expect(output.of(viewer).filter { $0.hasPrefix("pace:") }.count == 100)
    }

    /// Calls the hub's replays at `now` for as long as it asks to be called by then.
    func advance(_ hub: HubDriver, to now: Double) throws {
        var calls = 0
        repeat {
            hub.advanceReplays(now: now)
            calls += 1
            try #require(calls < 1_000)
        } while output.replaysDue.map { $0 <= now } == true
    }

    /// A fast replay far behind sends a page of fixes per call and asks to be called again at once, so the
    /// loop's other work goes between.
    @Test func aReplayFarBehindTakesTurns() throws {
        let hub = hub(pageSize: 100)
        let (runID, _) = try shuffledRun(hub)
        hub.received(.replay(runID: runID, speed: 100), from: viewer, now: start + 1000)
        let before = output.of(viewer).count
        hub.advanceReplays(now: start + 2000)
        #expect((95...100).contains(output.of(viewer).dropFirst(before).filter { $0.hasPrefix("pace:") }.count))
        #expect(output.replaysDue.map { $0 <= start + 2000 } == true)
    }

    @Test func aReplayWhoseConnectionClosesIsLetGoWithItsPages() throws {
        let hub = hub(pageSize: 50)
        let (runID, _) = try shuffledRun(hub)
        output.holdsReplayPages = true
        hub.received(.replay(runID: runID, speed: 100), from: viewer, now: start + 1000)
        weak let replay = hub.replays[viewer]
        hub.advanceReplays(now: start + 1100)
        let sent = output.of(viewer).count
        hub.disconnected(viewer, now: start + 1101)
        #expect(hub.replays.isEmpty && replay != nil, "its page is being read")
        output.readHeldPages()
        #expect(replay == nil, "the page that came back was dropped with it")
        #expect(output.of(viewer).count == sent)
    }

    /// Over the network, with the server's history queue: a run of several pages replayed in full.
    @Test func aServerReplaysARunOfManyPages() throws {
        try withPureServer({ $0.replayPageSize = 10 }) { server in
            let (ann, _) = try connectRunner("ann", to: server)
            for line in straightRun(count: 120, speed: 3.5) { try ann.send(line) }
            try ann.send("stop:")
            let end = try RunEndedEvent(event: Event.parse(ann.expect("end:ann", timeout: 20)))
            let viewer = server.connect()
            try viewer.send("replay:\(end.runID) 100")
            let lines = try viewer.lines(until: "done:replay", timeout: 20) { $0.hasPrefix("done:") || $0.hasPrefix("err:") }
            #expect(lines.filter { $0.hasPrefix("pace:ann") }.count == 120)
            #expect(lines.contains { $0.hasPrefix("end:ann") })
            #expect(lines.last?.hasPrefix("done:replay count=") == true, "\(lines.suffix(3))")
        }
    }
}
