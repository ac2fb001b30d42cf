import RunCore
import RunStore
import Synchronization

/// A memory store that writes down every read it is asked for, by name, in order, so a test can check that two
/// answers did the same work (a private runner's run refused as one nobody has, with no timing to tell them
/// apart) without timing anything.
public final class CountingStore: RunStore, @unchecked Sendable {
    private let inner = MemoryRunStore()
    private let log = Mutex<[String]>([])

    public init() {}

    /// The reads since the last ``takeReads()``, oldest first.
    public func takeReads() -> [String] {
        log.withLock { reads in
            defer { reads = [] }
            return reads
        }
    }

    private func note(_ read: String) { log.withLock { $0.append(read) } }

    public func allocateRunID() throws(StoreError) -> Int64 { try inner.allocateRunID() }
    public func submit(_ write: StoreWrite) { inner.submit(write) }
    public func setCommitHandler(_ handler: @escaping @Sendable (CommitReceipt) -> Void) { inner.setCommitHandler(handler) }
    public func flush() { inner.flush() }
    public func flushCommitted() throws(StoreError) { try inner.flushCommitted() }
    public var pendingWriteCount: Int { inner.pendingWriteCount }
    public func close() { inner.close() }
    public func runner(named name: String) throws(StoreError) -> RunnerRecord? {
        note("runner(named:)")
        return try inner.runner(named: name)
    }
    public func runs(of runner: String, offset: Int, limit: Int) throws(StoreError) -> [RunRecord] {
        note("runs(of:)")
        return try inner.runs(of: runner, offset: offset, limit: limit)
    }
    public func run(id: Int64) throws(StoreError) -> StoredRun? {
        note("run(id:)")
        return try inner.run(id: id)
    }
    public func owner(ofRun id: Int64) throws(StoreError) -> RunOwner? {
        note("owner(ofRun:)")
        return try inner.owner(ofRun: id)
    }
    public func fixes(ofRun id: Int64) throws(StoreError) -> [StoredFix] {
        note("fixes(ofRun:)")
        return try inner.fixes(ofRun: id)
    }
    public func awards(of runner: String) throws(StoreError) -> [StoredAward] {
        note("awards(of:)")
        return try inner.awards(of: runner)
    }
    public func liveRuns() throws(StoreError) -> [RunRecord] { try inner.liveRuns() }
    public func farthestDistance(of runner: String) throws(StoreError) -> Double {
        note("farthestDistance(of:)")
        return try inner.farthestDistance(of: runner)
    }
    public func deviceTokens() throws(StoreError) -> [DeviceToken] { try inner.deviceTokens() }
    public func shareTokens() throws(StoreError) -> [ShareToken] { try inner.shareTokens() }
    public func courses() throws(StoreError) -> [StoredCourse] { try inner.courses() }
    public func course(named name: String) throws(StoreError) -> StoredCourse? { try inner.course(named: name) }
    public func importRecord(ofRun id: Int64) throws(StoreError) -> ImportRecord? {
        note("importRecord(ofRun:)")
        return try inner.importRecord(ofRun: id)
    }
    public func importedRun(runner: String, firstPointTime: Double, pointCount: Int) throws(StoreError) -> Int64? {
        try inner.importedRun(runner: runner, firstPointTime: firstPointTime, pointCount: pointCount)
    }
}
