@testable import LiveCore
import Foundation
import RunCore
import RunStore
import MoonRunnerTestSupport
import Testing
import Wire

/// Relayed events about a run id this loop runs itself (another cluster on a shared Redis, with its own
/// database and so the same ids) leave the local run alone.
@Suite(.mayBlock) struct RelayedRunIDTests {
    @Test func anotherRunUnderTheSameIDDoesNotTakeTheLocalRunsAcks() throws {
        let store = MemoryRunStore()
        let output = AnsweringOutput(store: store)
        let hub = HubDriver(configuration: ServerConfiguration(), store: store, output: output)
        let ann = ConnectionID(1)
        let start = 1_700_000_000.0
        hub.connected(ann, now: start)
        hub.received(.identify(name: "ann", key: nil), from: ann, now: start)
        for index in 0..<5 {
            hub.received(.location(LocationCommand(latitude: 51.5 + Double(index) * 3 / 111_229, longitude: -0.12,
                                                   accuracy: 5, timestamp: start + Double(index))), from: ann,
                         now: start + Double(index))
        }
        let runID = try RunStartedEvent(line: try #require(output.of(ann).first { $0.hasPrefix("run:") })).runID
        // Another cluster's runner starts and ends a run with the same id.
        hub.receiveRelayed(RelayedEvent(runner: "zed", line: Array("run:zed id=\(runID) ts=1\n".utf8), audience: .everyone,
                                        sequence: 10, kind: .started(runID: runID, started: start, startHistory: BadgeHistory())),
                           now: start + 5)
        hub.receiveRelayed(RelayedEvent(runner: "zed", line: Array("end:zed run=\(runID)\n".utf8), audience: .everyone,
                                        sequence: 11, kind: .ended(runID: runID)), now: start + 6)
        hub.tick(now: start + 70)
        hub.committed(CommitReceipt(acknowledgements: [runID: "1700000004"]))
        #expect(output.of(ann).last == "ack:ann ts=1700000004", "\(output.of(ann).suffix(2))")
        hub.committed(CommitReceipt(failure: StoreError(.unavailable, "down"), affectedRuns: [runID]))
        #expect(output.of(ann).last?.hasPrefix("err:storage") == true)
    }
}
