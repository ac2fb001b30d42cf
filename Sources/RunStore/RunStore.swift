import RunCore

/// One change to storage. Writes are queued by ``RunStore/submit(_:)`` and committed in batches, in order.
public enum StoreWrite: Sendable {
    /// Creates a runner (ignored when the name exists: the first key hash stays).
    case runner(name: String, keyHash: String, created: Double)
    /// Creates a live run, or makes a held one live; a live run's start moves to `started` (a run whose first
    /// fixes arrived late starts earlier); a finished run is left as it is.
    case runStarted(id: Int64, runner: String, started: Double)
    /// The row of a run that may never start: a stale first fix held until the next says whether it begins a
    /// recording (see `FixOutcome.held`). Out of history (as discarded) until ``runStarted(id:runner:started:)``
    /// makes it live; its start moves with the fix held.
    case runHeld(id: Int64, runner: String, started: Double)
    /// Stores one received fix (replaces the same run and sequence). `acknowledgement` is the text to echo in
    /// `ack:` once the fix is committed; it comes back in ``CommitReceipt/acknowledgements``.
    case fix(StoredFix, acknowledgement: String?)
    /// Stores an award; idempotent on (run, badge, tier), so crash recovery may replay awards.
    case award(StoredAward)
    /// Ends a run: status saved, discarded or timed out, with final metrics, splits and checkpoints
    /// (creates the row if `runStarted` was never stored).
    case runFinished(RunRecord, splits: [Split], checkpoints: [CheckpointSplit])
    /// Merges a runner's badge history into the saved one (earliest earning, earliest silver and gold, fastest
    /// best: see `BadgeHistory.merged(with:)`), so two processes saving one runner lose neither's records.
    case history(runner: String, BadgeHistory)
    /// Records where an imported run came from (replaces an earlier record of the same run).
    case imported(ImportRecord)
    /// Stores a device token's hash for a runner (a phone app posting positions over HTTP).
    case device(DeviceToken)
    /// Revokes one device token of a runner (by hash), or all of the runner's when `tokenHash` is nil.
    case revokeDevice(runner: String, tokenHash: String?, at: Double)
    /// Sets a runner's privacy settings.
    case privacy(runner: String, RunnerPrivacy)
    /// Stores a share link's token hash.
    case share(ShareToken)
    /// Revokes one share token of a runner (by hash), or all of the runner's when `tokenHash` is nil.
    case revokeShare(runner: String, tokenHash: String?, at: Double)
    /// Stores a race course (replaces one of the same name).
    case course(StoredCourse)
    /// Removes a race course by name (nothing when there is none).
    case removeCourse(name: String)

    /// The fix of a `.fix` write, nil for the others. Read from the array in place on the writer thread: binding
    /// a whole element (`for case .fix(let fix, _) in writes`) copies its payload through the runtime's generic
    /// value witnesses (it is large), a few % of a flood's CPU.
    var storedFix: StoredFix? {
        guard case .fix(let fix, _) = self else { return nil }
        return fix
    }

    /// The run and `ack:` text of a `.fix` write that has one, nil otherwise.
    var fixAcknowledgement: (run: Int64, text: String)? {
        guard case .fix(let fix, let text?) = self else { return nil }
        return (fix.runID, text)
    }

    /// The run this write belongs to, if any.
    var runID: Int64? {
        switch self {
        case .runner, .history: nil
        case .runStarted(let id, _, _), .runHeld(let id, _, _): id
        case .fix(let fix, _): fix.runID
        case .award(let award): award.runID
        case .runFinished(let record, _, _): record.id
        case .imported(let record): record.runID
        case .device, .revokeDevice, .privacy, .share, .revokeShare, .course, .removeCourse: nil
        }
    }
}

/// What one batch of writes came to, given to the commit handler on the writer thread.
public struct CommitReceipt: Sendable {
    /// Per run, the acknowledgement text of the last fix committed in this batch (one ack per run per commit).
    public var acknowledgements: [Int64: String]
    /// Per run, the highest fix sequence committed in this batch. Batches commit in order, so every fix of the
    /// run submitted before it is on disk too (what a phone app's answer, or a late fix's, waits for).
    public var committedSequences: [Int64: Int64] = [:]
    /// Why the batch failed; nil when it committed.
    public var failure: StoreError?
    /// Runs with writes in a failed batch (empty when it committed).
    public var affectedRuns: Set<Int64>
    /// Writes in the batch (retained ones included).
    public var batchSize = 0
    /// Seconds from the start of the commit to its end, retries included.
    public var duration = 0.0

    /// Creates a receipt.
    public init(acknowledgements: [Int64: String] = [:], failure: StoreError? = nil, affectedRuns: Set<Int64> = []) {
        self.acknowledgements = acknowledgements
        self.failure = failure
        self.affectedRuns = affectedRuns
    }
}

/// Storage of runners, runs, fixes and badges. Writes are asynchronous (one writer thread, batched
/// transactions); reads are synchronous and thread-safe.
///
/// Failure policy (both implementations): a batch that fails with a transient error (disk full, I/O error,
/// read-only, locked) is rolled back and retried a few times with backoff; if it still fails, the commit
/// handler gets a receipt with the failure and the affected runs, the error is logged to stderr, and the
/// writes stay queued in memory to be retried ahead of the next batch (and at least once a second). Nothing is
/// dropped silently: a write that fails for a permanent reason (e.g. a constraint) is retried alone, and only
/// a write that still fails alone is dropped, with a log line naming it.
public protocol RunStore: AnyObject, Sendable {
    /// A new run id: thread-safe, and unique across restarts and across processes sharing the store (the
    /// database hands it out: see ``SQLiteRunStore``). Fails only when the store cannot be written.
    func allocateRunID() throws(StoreError) -> Int64
    /// Queues a write for the writer thread. Never waits for the disk.
    func submit(_ write: StoreWrite)
    /// Sets the function called on the writer thread after each batch (committed or failed). The handler must
    /// not call `flush()` or `close()` (they wait for the writer thread it runs on).
    func setCommitHandler(_ handler: @escaping @Sendable (CommitReceipt) -> Void)
    /// Blocks until everything submitted so far has been committed or has failed (and been reported).
    func flush()
    /// Blocks as ``flush()`` does, then throws unless everything submitted before the call is on disk (a batch
    /// failed and is kept for a retry, or a write was dropped): what a reply saying a change was stored waits for.
    func flushCommitted() throws(StoreError)
    /// Writes submitted and not committed yet (the server stops reading from runners while this is high).
    var pendingWriteCount: Int { get }
    /// Flushes, stops the writer thread and closes the database. Later submits are logged and ignored.
    func close()

    /// The runner with this name, with its badge history.
    func runner(named name: String) throws(StoreError) -> RunnerRecord?
    /// A runner's runs in history, newest first (by start time, then id), skipping `offset` and returning at
    /// most `limit`. A discarded run is not in history (see ``RunStatus/discarded``).
    func runs(of runner: String, offset: Int, limit: Int) throws(StoreError) -> [RunRecord]
    /// A run in history with its splits, checkpoints and awards; nil for an unknown or a discarded run.
    func run(id: Int64) throws(StoreError) -> StoredRun?
    /// Whose run `id` is and the runner's privacy, in one query whether the run exists or not; nil for an
    /// unknown or a discarded run. Read first about any run asked for: the answer for a private runner's run
    /// then takes the work of one for a run nobody has (no timing tells them apart).
    func owner(ofRun id: Int64) throws(StoreError) -> RunOwner?
    /// All fixes of a run, accepted and rejected, by sequence.
    func fixes(ofRun id: Int64) throws(StoreError) -> [StoredFix]
    /// At most `limit` fixes of a run, accepted and rejected, by sequence, from sequence `first` on: a run read
    /// a page at a time (see ``FixTimeline``). The default reads the whole run and keeps the page.
    func fixes(ofRun id: Int64, from first: Int64, limit: Int) throws(StoreError) -> [StoredFix]
    /// All awards of a runner, oldest first.
    func awards(of runner: String) throws(StoreError) -> [StoredAward]
    /// Runs still marked live (to recover after a crash).
    func liveRuns() throws(StoreError) -> [RunRecord]
    /// Where an imported run came from; nil for a run recorded live.
    func importRecord(ofRun id: Int64) throws(StoreError) -> ImportRecord?
    /// The longest run of a runner that is not discarded, in metres (0 without runs).
    func farthestDistance(of runner: String) throws(StoreError) -> Double
    /// Every device token not revoked (hashes only: the tokens themselves are never stored).
    func deviceTokens() throws(StoreError) -> [DeviceToken]
    /// Every share token not revoked (hashes only), expired ones included (the server drops those).
    func shareTokens() throws(StoreError) -> [ShareToken]
    /// Every race course, by name.
    func courses() throws(StoreError) -> [StoredCourse]
    /// The race course with this name, nil when there is none.
    func course(named name: String) throws(StoreError) -> StoredCourse?
    /// The run already imported for `runner` from an activity whose first point is at `firstPointTime` with
    /// `pointCount` points (a second import of the same file), if any.
    func importedRun(runner: String, firstPointTime: Double, pointCount: Int) throws(StoreError) -> Int64?
    /// Claims a new runner name now, for servers that share the store (a cluster): true if this call made the
    /// runner, false if the name was taken (by another server, first). Blocks on the database: never call it
    /// from an event loop. A store only one server uses queues the write and says true.
    func claimRunner(name: String, keyHash: String, created: Double) throws(StoreError) -> Bool
    /// File descriptors the store holds at most (its connections and their files): the server keeps them out
    /// of what it gives client connections (see `ConnectionBudget`). Default 16.
    var descriptorsNeeded: Int { get }
}

extension RunStore {
    /// A store that does not say: as many as ``SQLiteRunStore`` holds.
    public var descriptorsNeeded: Int { 16 }
    /// One server per store: the name is this server's to give (it knows every claim), so the write is queued.
    public func claimRunner(name: String, keyHash: String, created: Double) throws(StoreError) -> Bool {
        submit(.runner(name: name, keyHash: keyHash, created: created))
        return true
    }

    /// The whole run read, a page kept: for stores that wrap another (tests); the stores themselves read the
    /// page alone.
    public func fixes(ofRun id: Int64, from first: Int64, limit: Int) throws(StoreError) -> [StoredFix] {
        Array(try fixes(ofRun: id).drop { $0.sequence < first }.prefix(max(0, limit)))
    }
}

/// Defaults shared by the command line tools.
public enum StoreDefaults {
    /// The database file used when no `--db` is given: `moonrunner.sqlite` in the current directory.
    public static let path = "moonrunner.sqlite"
}

extension RunStore {
    /// A run's fixes in the order they are measured in: by timestamp (ties in the order received), without the
    /// ones filtered `out_of_order` (older than the run's newest when they came over TCP) or `future` (too far
    /// ahead of the clock when they came): never measured.
    /// A phone that was offline sends its positions late and in any order; the run's figures are those of
    /// its positions in time order, so replays, exports, recovery and the page all read them so.
    public func fixesInTimeOrder(ofRun id: Int64) throws(StoreError) -> [StoredFix] {
        StoredFix.inTimeOrder(try fixes(ofRun: id))
    }
}

extension StoredFix {
    /// `fixes` by timestamp (ties by sequence), without those filtered `out_of_order` or `future` (see
    /// ``RunStore/fixesInTimeOrder(ofRun:)``).
    public static func inTimeOrder(_ fixes: [StoredFix]) -> [StoredFix] {
        fixes.filter { $0.rejection != .outOfOrder && $0.rejection != .future }.sorted {
            ($0.fix.timestamp, $0.sequence) < ($1.fix.timestamp, $1.sequence)
        }
    }
}
