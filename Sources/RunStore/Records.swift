import RunCore

/// Where a run is in its life. Raw values are the `runs.status` column's text.
public enum RunStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// Fixes are still arriving (or the server stopped before the run ended: crash recovery picks it up).
    case live
    /// Ended by the runner and kept.
    case saved
    /// Ended by the runner and thrown away: kept in storage, marked discarded, but not in history (the
    /// stores' `runs(of:)` and `run(id:)` leave it out, so every list, page, export and replay does) and its
    /// badges do not count.
    case discarded
    /// Ended by the server after the runner went silent for too long.
    case timedOut = "ended_by_timeout"
}

/// A runner: a name and the hash of the secret key that proves it.
public struct RunnerRecord: Sendable, Hashable {
    /// The unique runner name.
    public var name: String
    /// SHA-256 hex of the runner's key (see ``RunnerKey``); the key itself is never stored.
    public var keyHash: String
    /// Unix time the runner was created.
    public var created: Double
    /// The runner's saved badge history.
    public var history: BadgeHistory
    /// Who may see the runner's runs (`private:`, `privacy:`).
    public var privacy: RunnerPrivacy

    /// Creates a runner record.
    public init(name: String, keyHash: String, created: Double, history: BadgeHistory = .init(),
                privacy: RunnerPrivacy = .init()) {
        self.name = name
        self.keyHash = keyHash
        self.created = created
        self.history = history
        self.privacy = privacy
    }
}

/// A runner's privacy settings, remembered across runs.
public struct RunnerPrivacy: Sendable, Hashable {
    /// Private runners are seen only by themselves and holders of their share links.
    public var isPrivate: Bool
    /// Metres at the start and end of every run whose positions only the runner sees (0 for none).
    public var zone: Double

    /// Creates settings (public, no zone by default).
    public init(isPrivate: Bool = false, zone: Double = 0) {
        self.isPrivate = isPrivate
        self.zone = zone
    }
}

/// Whose a run is, and that runner's privacy: the first thing read about any run asked for, so that a private
/// runner's run and a run nobody has cost the same one read before either is refused.
public struct RunOwner: Sendable, Hashable {
    /// The runner's name.
    public var runner: String
    /// The runner's privacy settings as stored.
    public var privacy: RunnerPrivacy

    /// Creates an owner.
    public init(runner: String, privacy: RunnerPrivacy) {
        self.runner = runner
        self.privacy = privacy
    }
}

/// A share link's token as stored: only its SHA-256, whose runs it opens, and until when.
public struct ShareToken: Sendable, Hashable {
    /// SHA-256 of the token, 64 hex digits.
    public var hash: String
    /// The runner whose runs it opens.
    public var runner: String
    /// When it was made (unix seconds).
    public var created: Double
    /// When it stops working (unix seconds).
    public var expires: Double

    /// Creates a record.
    public init(hash: String, runner: String, created: Double, expires: Double) {
        self.hash = hash
        self.runner = runner
        self.created = created
        self.expires = expires
    }
}

/// One run's row: who, when, its final (or so far stored) metrics and status.
public struct RunRecord: Sendable, Hashable {
    /// The run id (see ``RunStore/allocateRunID()``).
    public var id: Int64
    /// The runner's name.
    public var runner: String
    /// Unix time the run started.
    public var started: Double
    /// Unix time the run ended, nil while live.
    public var ended: Double?
    /// Distance in metres.
    public var distance: Double
    /// Seconds from first to last accepted fix.
    public var elapsed: Double
    /// Seconds spent moving.
    public var movingTime: Double
    /// Live, saved, discarded or ended by timeout.
    public var status: RunStatus
    /// Fixes filtered out, by reason.
    public var rejections: [FixRejection: Int]
    /// Metres climbed (see `ElevationMeter`; so far, for a live run), nil when no fix had an altitude.
    public var elevationGain: Double?
    /// Metres descended (so far, for a live run), nil when no fix had an altitude.
    public var elevationLoss: Double?

    /// Creates a run record.
    public init(id: Int64, runner: String, started: Double, ended: Double? = nil, distance: Double = 0,
                elapsed: Double = 0, movingTime: Double = 0, status: RunStatus = .live,
                rejections: [FixRejection: Int] = [:], elevationGain: Double? = nil, elevationLoss: Double? = nil) {
        self.elevationGain = elevationGain
        self.elevationLoss = elevationLoss
        self.id = id
        self.runner = runner
        self.started = started
        self.ended = ended
        self.distance = distance
        self.elapsed = elapsed
        self.movingTime = movingTime
        self.status = status
        self.rejections = rejections
    }

    /// Average pace in seconds per kilometre over the moving time; nil without distance.
    public var averagePace: Double? {
        distance > 0 ? movingTime / distance * 1000 : nil
    }
}

/// One fix as received for a run, accepted or not, in arrival order.
public struct StoredFix: Sendable, Hashable {
    /// The run it belongs to.
    public var runID: Int64
    /// Arrival order within the run, from 0 or 1 upwards; unique per run.
    public var sequence: Int64
    /// The fix as the phone sent it.
    public var fix: Fix
    /// The server's clock (unix seconds) when it arrived, so a replay gives the same filter decisions.
    public var received: Double
    /// Why it was filtered out; nil when accepted.
    public var rejection: FixRejection?

    /// Creates a stored fix.
    public init(runID: Int64, sequence: Int64, fix: Fix, received: Double, rejection: FixRejection? = nil) {
        self.runID = runID
        self.sequence = sequence
        self.fix = fix
        self.received = received
        self.rejection = rejection
    }

    /// True when the engine accepted the fix into the run.
    public var isAccepted: Bool { rejection == nil }
}

/// A badge award with the runner and run it belongs to.
public struct StoredAward: Sendable, Hashable {
    /// The runner's name.
    public var runner: String
    /// The run it was won in.
    public var runID: Int64
    /// The award.
    public var award: BadgeAward

    /// Creates a stored award.
    public init(runner: String, runID: Int64, award: BadgeAward) {
        self.runner = runner
        self.runID = runID
        self.award = award
    }
}

/// A run with everything stored about it except its fixes (see ``RunStore/fixes(ofRun:)``).
public struct StoredRun: Sendable {
    /// The run's row.
    public var record: RunRecord
    /// Km and mile splits (empty until the run finished).
    public var splits: [Split]
    /// Pace between consecutive badges (empty until the run finished).
    public var checkpoints: [CheckpointSplit]
    /// The run's awards, in the order they were won.
    public var awards: [StoredAward]

    /// Creates a stored run.
    public init(record: RunRecord, splits: [Split] = [], checkpoints: [CheckpointSplit] = [], awards: [StoredAward] = []) {
        self.record = record
        self.splits = splits
        self.checkpoints = checkpoints
        self.awards = awards
    }
}
