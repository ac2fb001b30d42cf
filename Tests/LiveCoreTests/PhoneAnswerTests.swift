@testable import LiveCore
import RunCore
import RunStore
import MoonRunnerTestSupport
import Testing
import Wire

/// A phone app's request of positions is answered by the hub: 200 only once every position it recorded is on
/// disk, 503 when storing failed, at once when nothing in it could ever be stored. Decided without sockets: the
/// store's commits are inputs here, fed when the test says.
@Suite struct PhoneAnswerTests {
    let output = RecordingOutput()
    let store = MemoryRunStore()
    let phone = ConnectionID(7), coach = ConnectionID(8)
    let start = 1_700_000_000.0

    func position(_ index: Int, alarm: String? = nil, battery: Double? = nil, age: Double = 0) -> DevicePosition {
        let time = start + Double(index) - age
        return DevicePosition(location: LocationCommand(latitude: 51.5 + Double(index) * 3 / 111_229, longitude: -0.12,
                                                        accuracy: 5, timestamp: time, timestampText: String(Int(time))),
                              alarm: alarm, battery: battery)
    }

    /// A hub that knows ann (claimed from another connection, then gone) and a coach of hers.
    func hub() throws -> (HubDriver, RunnerEntry, String) {
        let hub = HubDriver(configuration: ServerConfiguration(), store: store, output: output)
        let runner = ConnectionID(1)
        for id in [runner, phone, coach] { hub.connected(id, now: start) }
        hub.received(.identify(name: "ann", key: nil), from: runner, now: start)
        hub.received(.coach(.runner("ann"), token: nil, every: nil), from: coach, now: start)
        let token = hub.decide { $0.issueDeviceToken(for: "ann", label: "pixel", now: start) }
        hub.disconnected(runner, now: start)
        return (hub, try #require(hub.runners["ann"]), token)
    }

    func runID(_ hub: HubDriver) throws -> Int64 { try #require(hub.runners["ann"]?.run?.storedID) }

    @Test func positionsAreAnsweredOnlyOnceOnDisk() throws {
        let (hub, ann, token) = try hub()
        hub.phonePositions((0..<3).map { position($0) }, token: token, app: "OsmAnd", for: ann, from: phone, now: start + 3)
        #expect(output.phoneAnswers.isEmpty, "nothing is on disk yet")
        let run = try runID(hub)

        var partly = CommitReceipt()
        partly.committedSequences = [run: 1]
        hub.committed(partly)
        #expect(output.phoneAnswers.isEmpty, "the batch's last position is not on disk yet")

        var whole = CommitReceipt()
        whole.committedSequences = [run: 1_000]
        hub.committed(whole)
        #expect(output.phoneAnswers.map(\.0) == [phone] && output.phoneAnswers.map(\.1) == [.taken])
        hub.committed(whole)
        #expect(output.phoneAnswers.count == 1, "answered once")
    }

    @Test func aFailedWriteAnswersStorageFailingNeverTaken() throws {
        let (hub, ann, token) = try hub()
        hub.phonePositions([position(0), position(1)], token: token, app: "OsmAnd", for: ann, from: phone, now: start + 1)
        let run = try runID(hub)
        hub.committed(CommitReceipt(failure: StoreError(.busy, "disk full"), affectedRuns: [run]))
        #expect(output.phoneAnswers.map(\.1) == [.storageFailing])
        var later = CommitReceipt()
        later.committedSequences = [run: 1_000]
        hub.committed(later)
        #expect(output.phoneAnswers.count == 1, "a request is answered once, and the failure stands")
    }

    @Test func positionsNoRunCouldTakeAreAnsweredAtOnce() throws {
        let (hub, ann, token) = try hub()
        // A day ahead of the server's clock: refused before any run starts; sending it again would not help.
        hub.phonePositions([position(0, age: -86_400)], token: token, app: "OsmAnd", for: ann, from: phone, now: start)
        #expect(output.phoneAnswers.map(\.1) == [.taken])
        #expect(hub.runners["ann"]?.run?.storedID == nil, "no run started")
    }

    /// An SOS goes first: never held behind the positions it came with; the phone's app and battery are noted.
    @Test func anAlarmReachesTheCoachBeforeThePositionsItCameWith() throws {
        let (hub, ann, token) = try hub()
        hub.phonePositions([position(0), position(1, alarm: "sos", battery: 42)], token: token, app: "Traccar Client",
                           for: ann, from: phone, now: start + 1)
        let kinds = output.kinds(for: coach).filter { $0 != "ok" }
        let alert = try #require(kinds.firstIndex(of: "alert"), "\(kinds)")
        #expect(kinds.firstIndex(of: "run").map { alert < $0 } == true, "the SOS before the run the positions start: \(kinds)")
        let listed = hub.hub.deviceEvents(of: "ann")
        #expect(listed.first?.app == "Traccar Client" && listed.first?.battery == 42, "\(listed)")
    }
}
