import Dispatch
import RunCore
import RunStore

/// A memory store whose history reads wait until the test opens the gate (`runs(of:)`, and `owner(ofRun:)`, the
/// first read about any run; with `gatingFixes`, also `fixes(ofRun:)`, which a late joiner's snapshot reads; with
/// `gatingRunners`, also `runner(named:)`, the lookup of a name), so a test can hold an answer back while it checks
/// what else the server does meanwhile.
public final class GatedStore: RunStore, @unchecked Sendable {
    private let inner = MemoryRunStore()
    private let gate = DispatchSemaphore(value: 0)

    private let gatesFixes: Bool
    private let gatesRunners: Bool

    /// `gatingFixes`: reads of a run's fixes wait at the gate too; `gatingRunners`: lookups of a name.
    public init(gatingFixes: Bool = false, gatingRunners: Bool = false) {
        gatesFixes = gatingFixes
        gatesRunners = gatingRunners
    }

    /// Lets one waiting (or the next) history read through.
    public func open(times: Int = 1) {
        for _ in 0..<times { gate.signal() }
    }

    public func allocateRunID() throws(StoreError) -> Int64 { try inner.allocateRunID() }
    public func submit(_ write: StoreWrite) { inner.submit(write) }
    public func setCommitHandler(_ handler: @escaping @Sendable (CommitReceipt) -> Void) {
        inner.setCommitHandler(handler)
    }
    public func flush() { inner.flush() }
    public func flushCommitted() throws(StoreError) { try inner.flushCommitted() }
    public var pendingWriteCount: Int { inner.pendingWriteCount }
    public func close() { inner.close() }
    public func runner(named name: String) throws(StoreError) -> RunnerRecord? {
        if gatesRunners { gate.wait() }
        return try inner.runner(named: name)
    }
    public func runs(of runner: String, offset: Int, limit: Int) throws(StoreError) -> [RunRecord] {
        gate.wait()
        return try inner.runs(of: runner, offset: offset, limit: limit)
    }
    public func run(id: Int64) throws(StoreError) -> StoredRun? { try inner.run(id: id) }
    public func owner(ofRun id: Int64) throws(StoreError) -> RunOwner? {
        gate.wait()
        return try inner.owner(ofRun: id)
    }
    public func fixes(ofRun id: Int64) throws(StoreError) -> [StoredFix] {
        if gatesFixes { gate.wait() }
        return try inner.fixes(ofRun: id)
    }
    public func awards(of runner: String) throws(StoreError) -> [StoredAward] { try inner.awards(of: runner) }
    public func liveRuns() throws(StoreError) -> [RunRecord] { try inner.liveRuns() }
    public func deviceTokens() throws(StoreError) -> [DeviceToken] { try inner.deviceTokens() }
    public func shareTokens() throws(StoreError) -> [ShareToken] { try inner.shareTokens() }
    public func courses() throws(StoreError) -> [StoredCourse] { try inner.courses() }
    public func course(named name: String) throws(StoreError) -> StoredCourse? { try inner.course(named: name) }
    public func farthestDistance(of runner: String) throws(StoreError) -> Double { try inner.farthestDistance(of: runner) }
    public func importRecord(ofRun id: Int64) throws(StoreError) -> ImportRecord? { try inner.importRecord(ofRun: id) }
    public func importedRun(runner: String, firstPointTime: Double, pointCount: Int) throws(StoreError) -> Int64? {
        try inner.importedRun(runner: runner, firstPointTime: firstPointTime, pointCount: pointCount)
    }
}
