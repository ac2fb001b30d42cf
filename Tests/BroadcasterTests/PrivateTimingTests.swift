@testable import Broadcaster
@testable import LiveCore
import Foundation
import MoonRunnerTestSupport
import RunCore
import RunStore
import Testing
import WebRoutes
import Wire

/// A private runner's run, or name, is refused after the same store reads, in the same order, as a run (a name)
/// nobody has: the time of the answer cannot tell them apart. Checked by the reads themselves, not by a clock.
@Suite(.mayBlock) struct PrivateTimingTests {
    let store = CountingStore()
    let output: AnsweringOutput
    let ann = ConnectionID(1), other = ConnectionID(2)
    let start = 1_700_000_000.0

    init() { output = AnsweringOutput(store: store) }

    /// ann, private, ran 30 s and stopped (saved); her run's id.
    func privateSavedRun(_ hub: HubDriver) throws -> Int64 {
        hub.received(.identify(name: "ann", key: nil), from: ann, now: start)
        hub.received(.setPrivate(true), from: ann, now: start)
        for index in 0..<30 {
            let fix = LocationCommand(latitude: 51.5 + Double(index) * 3 / 111_229, longitude: -0.12, accuracy: 5,
                                      timestamp: start + Double(index), timestampText: String(Int(start) + index))
            hub.received(.location(fix), from: ann, now: start + Double(index))
        }
        hub.received(.stop(save: true), from: ann, now: start + 31)
        let started = try #require(output.of(ann).first { $0.hasPrefix("run:") })
        store.flush()
        return try RunStartedEvent(line: started).runID
    }

    /// The reads `body` makes, and what `other` was told meanwhile.
    func reads(_ body: () throws -> Void) rethrows -> (reads: [String], told: [String]) {
        _ = store.takeReads()
        let before = output.of(other).count
        try body()
        return (store.takeReads(), Array(output.of(other).dropFirst(before)))
    }

    @Test func aPrivateRunIsRefusedAfterTheReadsOfARunNobodyHas() throws {
        let hub = HubDriver(configuration: ServerConfiguration(), store: store, output: output)
        for id in [ann, other] { hub.connected(id, now: start) }
        let runID = try privateSavedRun(hub)
        let missing = runID + 1000
        let tracker = TrackerConfiguration()
        for (what, ask) in [
            ("run:", { (id: Int64) in hub.received(.showRun(id: id), from: other, now: start + 40) }),
            ("replay:", { (id: Int64) in hub.received(.replay(runID: id, speed: 10), from: other, now: start + 40) }),
            ("GET /api/runs/ID", { (id: Int64) in _ = try? WebAPI.run(id, visible: [], store: store, tracker: tracker) }),
            ("GET /runs/ID.gpx", { (id: Int64) in
                _ = try? WebAPI.export(id, format: .gpx, visible: [], store: store, tracker: tracker)
            }),
        ] {
            let hidden = reads { ask(runID) }, absent = reads { ask(missing) }
            #expect(hidden.reads == absent.reads, "\(what)")
            #expect(hidden.reads == ["owner(ofRun:)"], "\(what): one read, then refused")
            #expect(hidden.told == absent.told.map { $0.replacingOccurrences(of: String(missing), with: String(runID)) },
                    "\(what)")
        }
        // ann herself reads her run, as does a holder of her share link.
        hub.received(.showRun(id: runID), from: ann, now: start + 41)
        #expect(output.of(ann).last?.hasPrefix("done:run ") == true)
        #expect(try WebAPI.run(runID, visible: ["ann"], store: store, tracker: tracker).status == .ok)
    }

    @Test func aPrivateRunnerIsRefusedOnTheWebAfterTheReadsOfANameNobodyHas() throws {
        let hub = HubDriver(configuration: ServerConfiguration(), store: store, output: output)
        for id in [ann, other] { hub.connected(id, now: start) }
        _ = try privateSavedRun(hub)
        for (what, ask) in [
            ("GET /api/runners/NAME", { (name: String) in
                _ = try? WebAPI.runner(name, known: false, snapshot: nil, visible: [], store: store)
            }),
            ("GET /api/runners/NAME/runs", { (name: String) in
                _ = try? WebAPI.runs(name, offset: 0, limit: 20, live: nil, visible: [], store: store)
            }),
            ("GET /api/runners/NAME/badges", { (name: String) in
                _ = try? WebAPI.badges(name, live: nil, visible: [], store: store)
            }),
        ] {
            let hidden = reads { ask("ann") }, absent = reads { ask("zed") }
            #expect(hidden.reads == absent.reads && hidden.reads == ["runner(named:)"], "\(what): \(hidden.reads)")
        }
    }
}
