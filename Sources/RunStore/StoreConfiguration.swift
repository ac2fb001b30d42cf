/// How a store batches, syncs and waits. Every setting has a documented default.
public struct StoreConfiguration: Sendable, Hashable {
    /// SQLite's `PRAGMA synchronous` levels that make sense with WAL.
    public enum Synchronous: String, Sendable, Hashable {
        /// No fsync at all: fastest; a power cut may lose recent commits (never corrupts with WAL).
        case off = "OFF"
        /// fsync at checkpoints only: a power cut may lose the last commits, an application crash loses nothing.
        case normal = "NORMAL"
        /// fsync at every commit.
        case full = "FULL"
    }

    /// Most writes committed in one transaction. The writer commits everything queued since its last commit
    /// (after `maximumBatchDelay`), so under load transactions grow by themselves up to this; a bigger one
    /// costs less per fix (each run's newest rows are written once per transaction, however many fixes it
    /// adds to them), and its acks come when it commits. Default 65536.
    public var maximumBatchSize: Int = 65_536
    /// How long the writer waits after the first queued write for more to arrive before committing, in
    /// seconds; `flush()` and `close()` skip the wait. Default 0.005 (5 ms).
    public var maximumBatchDelay: Double = 0.005
    /// Durability of commits. Default `.normal` (with WAL: safe against crashes of the process).
    public var synchronous: Synchronous = .normal
    /// How long a connection waits for another's lock before failing with `SQLITE_BUSY`, in seconds. Default 5.
    public var busyTimeout: Double = 5
    /// Run `PRAGMA quick_check` at open, so a corrupt file fails at open rather than later. It reads the whole
    /// file once (about a second per few hundred MB). Default true.
    public var checksIntegrityAtOpen: Bool = true
    /// Extra attempts for a batch that failed with a transient error before reporting it. Default 3.
    public var retryAttempts: Int = 3
    /// Pause before the first retry in seconds, doubled for each further one. Default 0.01.
    public var retryBackoff: Double = 0.01
    /// How often writes kept after a failed batch are retried when nothing new arrives, in seconds. Default 1.
    public var retainedRetryInterval: Double = 1
    /// Copy the WAL into the database file on a background thread (its own connection), at most once per
    /// `checkpointInterval`, instead of SQLite's automatic checkpoint on the writer, whose fsync would stall
    /// commits. The writer still checkpoints by itself if the WAL passes `writerCheckpointPages` (a backstop).
    /// Default true.
    public var checkpointsInBackground: Bool = true
    /// Seconds between background checkpoints. Default 0.1.
    public var checkpointInterval: Double = 0.1
    /// WAL pages after which the writer checkpoints by itself (`PRAGMA wal_autocheckpoint`): SQLite's 1000
    /// without background checkpoints, else this backstop. Default 20000 (about 80 MB).
    public var writerCheckpointPages: Int = 20_000
    /// A cap on the database size in pages (`PRAGMA max_page_count`); nil for SQLite's default (no practical cap).
    /// Writes past it fail like a full disk (`SQLITE_FULL`).
    public var maximumPageCount: Int? = nil

    /// The most run ids a process reserves from the database's sequence at a time. SQLite: blocks start at one
    /// id and double up to this, so an import reserves few; PostgreSQL: every block is this size. The next
    /// block is reserved ahead, off the caller's thread, once half of the last is used (``RunIDReserve``), so
    /// a server starting runs does not wait for the database. SQLite gives the unused ids back at close when no
    /// other process reserved since. Default 16.
    public var runIDBlockSize: Int = 16

    /// The defaults.
    public init() {}
}
