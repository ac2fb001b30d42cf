@testable import LiveCore
import Foundation
import RunCore
import RunStore
import MoonRunnerTestSupport
import Testing
import Wire

/// `replay:` on a fake clock: a saved run's events come again at SPEED times the pace they were run at.
@Suite(.mayBlock) struct ReplayTests {
    let store = MemoryRunStore()
    let output: AnsweringOutput
    let ann = ConnectionID(1), viewer = ConnectionID(2), other = ConnectionID(3)
    let start = 1_700_000_000.0

    init() { output = AnsweringOutput(store: store) }

    func hub(_ configure: (inout ServerConfiguration) -> Void = { _ in }) -> HubDriver {
        var configuration = ServerConfiguration()
        configure(&configuration)
        let hub = HubDriver(configuration: configuration, store: store, output: output)
        for id in [ann, viewer, other] { hub.connected(id, now: start) }
        return hub
    }

    /// ann runs 300 s at 4 m/s (past the first badges and a kilometre) and stops; the run's id and its live lines.
    func savedRun(_ hub: HubDriver) throws -> (Int64, [String]) {
        hub.received(.identify(name: "ann", key: nil), from: ann, now: start)
        for index in 0..<300 {
            let fix = LocationCommand(latitude: 51.5 + Double(index) * 4 / 111_229, longitude: -0.12, accuracy: 5,
                                      timestamp: start + Double(index), timestampText: String(Int(start) + index))
            hub.received(.location(fix), from: ann, now: start + Double(index))
        }
        hub.received(.stop(save: true), from: ann, now: start + 300)
        let lines = output.of(ann).filter { !$0.hasPrefix("ok:") && !$0.hasPrefix("ack:") }
        return (try RunStartedEvent(line: try #require(lines.first)).runID, lines)
    }

    @Test func aReplayComesAtSpeedTimesThePaceItWasRunAt() throws {
        let hub = hub()
        let (runID, live) = try savedRun(hub)
        let now = start + 1000
        hub.received(.replay(runID: runID, speed: 10), from: viewer, now: now)
        #expect(output.of(viewer).first == "ok:replay run=\(runID) speed=10.0")
        // Run time t is replayed at now + t / 10: after k seconds, the paces of the first 10 k seconds.
        for elapsed in [0.0, 1, 2.5, 7, 15] {
            hub.advanceReplays(now: now + elapsed)
            let paces = output.of(viewer).filter { $0.hasPrefix("pace:") }
            let expected = min(300, Int(elapsed * 10) + 1)
            #expect(paces.count == expected, "at \(elapsed) s: \(paces.count) paces")
            if elapsed < 29.9 { #expect(output.replaysDue.map { $0 > now + elapsed && $0 <= now + elapsed + 0.1 } == true) }
        }
        hub.advanceReplays(now: now + 30)
        let replayed = output.of(viewer).dropFirst().filter { !$0.hasPrefix("done:") }
        // The same events as live: run, paces, splits, badges and the end (live badges follow their pace line,
        // replayed ones come at their own time: compare them as sets of lines per kind).
        for kind in ["run:", "pace:", "split:", "badge:", "end:"] {
            #expect(replayed.filter { $0.hasPrefix(kind) } == live.filter { $0.hasPrefix(kind) }, "\(kind)")
        }
        #expect(output.of(viewer).last == "done:replay count=\(replayed.count) more=no")
        #expect(output.replaysDue == nil, "nothing left to replay")
    }

    @Test func aRefusedStampFarAheadDoesNotHoldTheReplayBack() throws {
        let hub = hub()
        hub.received(.identify(name: "ann", key: nil), from: ann, now: start)
        // Fixes 0-5, one stamped ten times the clock (filtered as `future`, stored with its rejection), 7-9.
        for index in [0, 1, 2, 3, 4, 5, -1, 7, 8, 9] {
            let time = index < 0 ? start * 10 : start + Double(index)
            let fix = LocationCommand(latitude: 51.5 + Double(max(index, 0)) * 4 / 111_229, longitude: -0.12,
                                      accuracy: 5, timestamp: time, timestampText: NumberFormat.plain(time))
            hub.received(.location(fix), from: ann, now: start + Double(max(index, 6)))
        }
        hub.received(.stop(save: true), from: ann, now: start + 10)
        let runID = try RunStartedEvent(line: try #require(output.of(ann).first { $0.hasPrefix("run:") })).runID
        hub.received(.replay(runID: runID, speed: 100), from: viewer, now: start + 100)
        hub.advanceReplays(now: start + 101)
        #expect(output.of(viewer).filter { $0.hasPrefix("pace:") }.count == 9)
        #expect(output.of(viewer).last?.hasPrefix("done:replay") == true, "\(output.of(viewer))")
        #expect(output.replaysDue == nil)
    }

    @Test func aRunnerGoingPrivateEndsTheReplaysOfOthers() throws {
        let hub = hub()
        let (runID, _) = try savedRun(hub)
        hub.received(.replay(runID: runID, speed: 10), from: viewer, now: start + 1000)
        hub.received(.replay(runID: runID, speed: 10), from: ann, now: start + 1000)
        hub.advanceReplays(now: start + 1001)
        let before = output.of(viewer).count
        hub.received(.setPrivate(true), from: ann, now: start + 1001)
        hub.advanceReplays(now: start + 1010)
        // Not one line more of it: to the viewer the run no longer exists. The runner's own goes on.
        #expect(Array(output.of(viewer).dropFirst(before)) == ["err:not_found \"no run \(runID)\""])
        #expect(output.of(ann).last?.hasPrefix("pace:ann") == true || output.of(ann).last?.hasPrefix("split:ann") == true
                    || output.of(ann).last?.hasPrefix("badge:ann") == true, "\(output.of(ann).suffix(2))")
    }

    @Test func replaysBeingReadCountTowardTheCap() throws {
        let hub = hub { $0.maximumReplays = 2 }
        let (runID, _) = try savedRun(hub)
        output.holdsReplayReads = true
        for id in [viewer, other, ConnectionID(4)] {
            hub.connected(id, now: start + 1000)
            hub.received(.replay(runID: runID, speed: 1), from: id, now: start + 1000)
        }
        #expect(output.of(ConnectionID(4)).last?.hasPrefix("err:busy") == true, "\(output.of(ConnectionID(4)))")
        output.readHeldReplays()
        #expect(output.of(viewer).contains { $0.hasPrefix("ok:replay") } && output.of(other).contains { $0.hasPrefix("ok:replay") })
        #expect(hub.replays.count == 2)
    }

    @Test func replayOffStopsAndAPrivateRunIsAMissingOne() throws {
        let hub = hub()
        let (runID, _) = try savedRun(hub)
        hub.received(.replay(runID: runID, speed: 100), from: viewer, now: start + 400)
        hub.received(.replay(runID: nil, speed: 1), from: viewer, now: start + 400)
        // What run time 0 holds (the start, its first pace, then the Earth badge as live), then nothing more.
        let replayed = output.of(viewer).drop { !$0.hasPrefix("ok:replay run=") }
        #expect(replayed.map { String($0.prefix(6)) } == ["ok:rep", "run:an", "pace:a", "badge:", "ok:rep"], "\(replayed)")
        #expect(output.of(viewer).last == "ok:replay stopped=yes" && output.replaysDue == nil)
        hub.received(.setPrivate(true), from: ann, now: start + 401)
        hub.received(.replay(runID: runID, speed: 5), from: other, now: start + 402)
        hub.received(.replay(runID: runID + 1000, speed: 5), from: other, now: start + 402)
        let answers = output.of(other).suffix(2)
        #expect(answers.first == "err:not_found \"no run \(runID)\"" && answers.last == "err:not_found \"no run \(runID + 1000)\"")
        hub.received(.replay(runID: runID, speed: 5), from: ann, now: start + 403)
        #expect(output.of(ann).drop { !$0.hasPrefix("ok:replay run=") }.dropFirst().first?.hasPrefix("run:ann") == true,
                "the runner replays its own private run")
    }
}
