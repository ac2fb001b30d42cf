import LiveCore
import MoonRunnerTestSupport
import RunStore
import Testing
import Wire

/// A run whose node died and whose runner never came back, ended by a surviving node: rebuilt from the shared
/// store and ended as timed out, its followers on the survivor hearing the end. Decided without sockets.
@Suite struct AbandonedRunTests {
    @Test func anAbandonedRunIsRebuiltAndEndedAsTimedOut() throws {
        let store = MemoryRunStore()
        // The node that died: it measured ann's run and stored every fix, then went silent.
        let dead = PureServer(store: store)
        let (ann, _) = try connectRunner("ann", to: dead)
        let fixes = straightRun(count: 40, from: dead.now - 40)
        for line in fixes { try ann.send(line) }
        try ann.expect("ack:ann ts=\(fixes.last!.split(separator: ",").last!)")
        let record = try #require(try store.liveRuns().first { $0.runner == "ann" })

        let survivor = PureServer(store: store, now: dead.now + 700, recovers: false)  // a cluster's node
        let watcher = survivor.connect()
        try watcher.ask("watch:ann", expecting: "ok:watch")
        #expect(!survivor.driver.hub.hasRunHere("ann"))
        let runner = try #require(try store.runner(named: "ann"))
        survivor.driver.decide {
            $0.endAbandoned(record, runner: runner, fixes: try! store.fixesInTimeOrder(ofRun: record.id), now: survivor.now)
        }
        survivor.settle()
        let end = try RunEndedEvent(event: Event.parse(watcher.expect("end:ann")))
        #expect(end.runID == record.id && end.reason == .timeout && end.saved)
        #expect(abs(end.distance - 39 * 3) < 3, "measured from the stored fixes: \(end.distance)")
        #expect(try store.run(id: record.id)?.record.status == .timedOut)
        #expect(try store.liveRuns().isEmpty)
    }
}
