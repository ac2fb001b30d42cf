import Foundation
import Locking
import RunCore
import Synchronization

/// The run store in memory, with the same semantics as ``SQLiteRunStore`` (same writer thread, batching and
/// receipts): for tests and `--db :memory:`. Nothing survives the process.
public final class MemoryRunStore: RunStore {
    private let model: MemoryModel
    private let queue: WriteQueue
    private let nextRunID = Mutex<Int64>(1)

    /// An empty store with the default configuration.
    public convenience init() {
        self.init(configuration: .init())
    }

    /// An empty store batching as `configuration` says (the SQLite-only settings are ignored).
    public init(configuration: StoreConfiguration) {
        let model = MemoryModel()
        self.model = model
        queue = WriteQueue(configuration: configuration, sink: model, label: ":memory:")
    }

    deinit { queue.close() }

    /// A new run id.
    public func allocateRunID() throws(StoreError) -> Int64 {
        nextRunID.withLock { next in
            defer { next += 1 }
            return next
        }
    }

    /// Queues a write for the writer thread.
    public func submit(_ write: StoreWrite) { queue.submit(write) }

    /// Sets the function called on the writer thread after each batch.
    public func setCommitHandler(_ handler: @escaping @Sendable (CommitReceipt) -> Void) {
        queue.setCommitHandler(handler)
    }

    /// Writes submitted and not committed yet.
    public var pendingWriteCount: Int { queue.pendingWriteCount }

    /// None: nothing is on disk.
    public var descriptorsNeeded: Int { 0 }

    /// Blocks until everything submitted so far has been applied.
    public func flush() { queue.flush() }
    /// See ``RunStore/flushCommitted()``.
    public func flushCommitted() throws(StoreError) { try queue.flushCommitted() }

    /// Flushes and stops the writer thread; the data stays readable.
    public func close() { queue.close() }

    /// The runner with this name, with its badge history.
    public func runner(named name: String) throws(StoreError) -> RunnerRecord? {
        model.read { state in
            guard var runner = state.runners[name] else { return nil }
            runner.history = state.histories[name] ?? BadgeHistory()
            return runner
        }
    }

    /// A runner's runs in history (not the discarded ones), newest first.
    public func runs(of runner: String, offset: Int, limit: Int) throws(StoreError) -> [RunRecord] {
        model.read { state in
            let runs = state.runs.values.map(\.record).filter { $0.runner == runner && $0.status != .discarded }
                .sorted(by: MemoryModel.newestFirst)
            return Array(runs.dropFirst(max(0, offset)).prefix(max(0, limit)))
        }
    }

    /// A run in history with its splits, checkpoints and awards (nil for a discarded one).
    public func run(id: Int64) throws(StoreError) -> StoredRun? {
        model.read { state in
            guard var run = state.runs[id], run.record.status != .discarded else { return nil }
            run.awards = state.awards.filter { $0.runID == id }
            return run
        }
    }

    /// Whose run `id` is (in history), with the runner's privacy.
    public func owner(ofRun id: Int64) throws(StoreError) -> RunOwner? {
        model.read { state in
            guard let run = state.runs[id], run.record.status != .discarded else { return nil }
            let name = run.record.runner
            return RunOwner(runner: name, privacy: state.runners[name]?.privacy ?? RunnerPrivacy())
        }
    }

    /// All fixes of a run, accepted and rejected, by sequence.
    public func fixes(ofRun id: Int64) throws(StoreError) -> [StoredFix] {
        model.read { state in
            (state.fixes[id] ?? [:]).values.sorted { $0.sequence < $1.sequence }
        }
    }

    /// At most `limit` fixes of a run from sequence `first` on, by sequence: looked up one sequence after
    /// another (a run's are consecutive), the next stored one searched for only past a gap.
    public func fixes(ofRun id: Int64, from first: Int64, limit: Int) throws(StoreError) -> [StoredFix] {
        model.read { state in
            guard let run = state.fixes[id] else { return [] }
            var page: [StoredFix] = []
            var sequence = first
            while page.count < limit {
                guard let fix = run[sequence] else {
                    guard let next = run.keys.lazy.filter({ $0 > sequence }).min() else { break }
                    sequence = next
                    continue
                }
                page.append(fix)
                guard sequence < .max else { break }
                sequence += 1
            }
            return page
        }
    }

    /// All awards of a runner, in the order they were stored.
    public func awards(of runner: String) throws(StoreError) -> [StoredAward] {
        model.read { state in state.awards.filter { $0.runner == runner } }
    }

    /// Runs still marked live.
    public func liveRuns() throws(StoreError) -> [RunRecord] {
        model.read { state in
            state.runs.values.map(\.record).filter { $0.status == .live }.sorted { $0.id < $1.id }
        }
    }

    /// The longest run of a runner that is not discarded.
    public func farthestDistance(of runner: String) throws(StoreError) -> Double {
        model.read { state in
            state.runs.values.map(\.record).filter { $0.runner == runner && $0.status != .discarded }
                .map(\.distance).max() ?? 0
        }
    }

    /// Every device token not revoked.
    public func deviceTokens() throws(StoreError) -> [DeviceToken] {
        model.read { state in state.devices.values.sorted { $0.created < $1.created } }
    }

    /// Every share token not revoked.
    public func shareTokens() throws(StoreError) -> [ShareToken] {
        model.read { state in state.shares.values.sorted { $0.created < $1.created } }
    }

    /// Every race course, by name.
    public func courses() throws(StoreError) -> [StoredCourse] {
        model.read { state in state.courses.values.sorted { $0.name < $1.name } }
    }

    /// The race course with this name.
    public func course(named name: String) throws(StoreError) -> StoredCourse? {
        model.read { state in state.courses[name] }
    }

    /// Where an imported run came from.
    public func importRecord(ofRun id: Int64) throws(StoreError) -> ImportRecord? {
        model.read { state in state.imports[id] }
    }

    /// The run already imported from the same activity for `runner`, if any.
    public func importedRun(runner: String, firstPointTime: Double, pointCount: Int) throws(StoreError) -> Int64? {
        model.read { state in
            state.imports.values.filter {
                $0.runner == runner && $0.firstPointTime == firstPointTime && $0.pointCount == pointCount
            }.map(\.runID).min()
        }
    }
}

/// The in-memory tables, behind a lock; also the memory store's batch sink.
final class MemoryModel: BatchSink, Sendable {
    struct AwardKey: Hashable {
        var run: Int64, badge: String, tier: BadgeTier
    }

    struct State {
        var runners: [String: RunnerRecord] = [:]
        var histories: [String: BadgeHistory] = [:]
        var runs: [Int64: StoredRun] = [:]
        var fixes: [Int64: [Int64: StoredFix]] = [:]
        var awards: [StoredAward] = []
        var awardKeys: Set<AwardKey> = []
        var imports: [Int64: ImportRecord] = [:]
        var devices: [String: DeviceToken] = [:]
        var shares: [String: ShareToken] = [:]
        var courses: [String: StoredCourse] = [:]
    }

    private let state = Locked(State())

    static func newestFirst(_ a: RunRecord, _ b: RunRecord) -> Bool {
        a.started != b.started ? a.started > b.started : a.id > b.id
    }

    func read<Result>(_ body: (State) -> Result) -> Result {
        state.withLock { body($0) }
    }

    func commit(_ writes: [StoreWrite]) throws(StoreError) {
        state.withLock { state in
            for write in writes { Self.apply(write, to: &state) }
        }
    }

    func close() {}

    private static func apply(_ write: StoreWrite, to state: inout State) {
        switch write {
        case .runner(let name, let keyHash, let created):
            if state.runners[name] == nil {
                state.runners[name] = RunnerRecord(name: name, keyHash: keyHash, created: created)
            }
        case .runStarted(let id, let runner, let started):
            if let run = state.runs[id]?.record, run.ended != nil || run.status != .live && run.status != .discarded {
                break  // finished: left as it is
            }
            state.runs[id] = StoredRun(record: RunRecord(id: id, runner: runner, started: started))
        case .runHeld(let id, let runner, let started):
            if let run = state.runs[id]?.record, run.ended != nil || run.status != .discarded { break }
            state.runs[id] = StoredRun(record: RunRecord(id: id, runner: runner, started: started, status: .discarded))
        case .fix(let fix, _):
            state.fixes[fix.runID, default: [:]][fix.sequence] = fix
        case .award(let award):
            let key = AwardKey(run: award.runID, badge: award.award.badge.id, tier: award.award.tier)
            if state.awardKeys.insert(key).inserted {
                state.awards.append(award)
            } else if let index = state.awards.firstIndex(where: {
                AwardKey(run: $0.runID, badge: $0.award.badge.id, tier: $0.award.tier) == key
            }) {
                state.awards[index] = award  // a run measured again: the badge's time and place as now measured
            }
        case .runFinished(let record, let splits, let checkpoints):
            var stored = record
            stored.rejections = record.rejections.filter { $0.value != 0 }
            state.runs[record.id] = StoredRun(record: stored, splits: splits, checkpoints: checkpoints)
        case .history(let runner, let history):
            state.histories[runner] = (state.histories[runner] ?? BadgeHistory()).merged(with: history)
        case .imported(let record):
            state.imports[record.runID] = record
        case .device(let token):
            state.devices[token.hash] = token
        case .revokeDevice(let runner, let hash, _):
            state.devices = state.devices.filter { $0.value.runner != runner || (hash != nil && $0.key != hash) }
        case .privacy(let runner, let privacy):
            state.runners[runner]?.privacy = privacy
        case .share(let token):
            state.shares[token.hash] = token
        case .revokeShare(let runner, let hash, _):
            state.shares = state.shares.filter { $0.value.runner != runner || (hash != nil && $0.key != hash) }
        case .course(let course):
            state.courses[course.name] = course
        case .removeCourse(let name):
            state.courses[name] = nil
        }
    }
}
