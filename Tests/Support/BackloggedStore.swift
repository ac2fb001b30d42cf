import RunCore
import RunStore
import Synchronization

/// A memory store that reports as many writes waiting as the test says, so a test can make the store look
/// slow and see the server push back, then let it catch up.
public final class BackloggedStore: RunStore, @unchecked Sendable {
    private let inner = MemoryRunStore()
    private let reported = Mutex<Int?>(nil)

    public init() {}

    /// Reports `count` writes waiting from now on (nil: the real count).
    public func pretendBacklog(_ count: Int?) { reported.withLock { $0 = count } }

    public var pendingWriteCount: Int { reported.withLock { $0 } ?? inner.pendingWriteCount }
    public func allocateRunID() throws(StoreError) -> Int64 { try inner.allocateRunID() }
    public func submit(_ write: StoreWrite) { inner.submit(write) }
    public func setCommitHandler(_ handler: @escaping @Sendable (CommitReceipt) -> Void) { inner.setCommitHandler(handler) }
    public func flush() { inner.flush() }
    public func flushCommitted() throws(StoreError) { try inner.flushCommitted() }
    public func close() { inner.close() }
    public func runner(named name: String) throws(StoreError) -> RunnerRecord? { try inner.runner(named: name) }
    public func runs(of runner: String, offset: Int, limit: Int) throws(StoreError) -> [RunRecord] {
        try inner.runs(of: runner, offset: offset, limit: limit)
    }
    public func run(id: Int64) throws(StoreError) -> StoredRun? { try inner.run(id: id) }
    public func owner(ofRun id: Int64) throws(StoreError) -> RunOwner? { try inner.owner(ofRun: id) }
    public func fixes(ofRun id: Int64) throws(StoreError) -> [StoredFix] { try inner.fixes(ofRun: id) }
    public func awards(of runner: String) throws(StoreError) -> [StoredAward] { try inner.awards(of: runner) }
    public func liveRuns() throws(StoreError) -> [RunRecord] { try inner.liveRuns() }
    public func farthestDistance(of runner: String) throws(StoreError) -> Double { try inner.farthestDistance(of: runner) }
    public func deviceTokens() throws(StoreError) -> [DeviceToken] { try inner.deviceTokens() }
    public func shareTokens() throws(StoreError) -> [ShareToken] { try inner.shareTokens() }
    public func courses() throws(StoreError) -> [StoredCourse] { try inner.courses() }
    public func course(named name: String) throws(StoreError) -> StoredCourse? { try inner.course(named: name) }
    public func importRecord(ofRun id: Int64) throws(StoreError) -> ImportRecord? { try inner.importRecord(ofRun: id) }
    public func importedRun(runner: String, firstPointTime: Double, pointCount: Int) throws(StoreError) -> Int64? {
        try inner.importedRun(runner: runner, firstPointTime: firstPointTime, pointCount: pointCount)
    }
}
