import RunCore
import RunStore
import Wire

/// A runner the server knows: the key hash, the badge history and the run in progress. Loop thread only.
package final class RunnerEntry {
    /// The claimed name.
    package let name: String
    /// SHA-256 of the key (the key itself is never kept).
    let keyHash: String
    /// Badge history as of the last finished run.
    package var history: BadgeHistory
    /// The connection that speaks for the runner now, if any.
    var connection: ConnectionID?
    /// The run in progress (or waiting for its first accepted fix).
    package var run: LiveRun?
    /// The goal set with `goal:`, for the live run and the next ones until changed (kept in memory only).
    var goal: GoalCommand?
    /// The course chosen with `course:`, for the live run and the next ones until changed (memory only); nil
    /// follows the server's (`serve --course`), if any, unless ``declinesCourse``.
    var course: Course?
    /// True after `course:off`: the server's race course does not apply to this runner's runs either.
    var declinesCourse = false

    /// The course the runner's runs follow: its own, else the race's (unless it declined).
    func followedCourse(in race: Course?) -> Course? {
        course ?? (declinesCourse ? nil : race)
    }
    /// Who may see the runner's runs (`private:`, `privacy:`), as stored.
    var privacy: RunnerPrivacy

    init(name: String, keyHash: String, history: BadgeHistory, privacy: RunnerPrivacy = .init()) {
        self.name = name
        self.keyHash = keyHash
        self.history = history
        self.privacy = privacy
    }

    /// The entry of a stored runner.
    convenience init(_ record: RunnerRecord) {
        self.init(name: record.name, keyHash: record.keyHash, history: record.history, privacy: record.privacy)
    }
}

/// One run in progress. A class, so the engine inside it is changed in place on every fix, never copied.
package final class LiveRun {
    /// Lifecycle of a run: waiting for the first accepted fix, then running under a run id. In between it may
    /// be holding: a stale first fix is stored under a run id nobody has been told of yet, until the next fix
    /// says whether it starts the run (see ``RunCore/FixOutcome/held``).
    enum Phase {
        case waiting
        case holding(id: Int64)
        case running(id: Int64, started: Double)
    }

    /// Where the run is in its life.
    var phase: Phase = .waiting
    /// The engine measuring this run.
    var tracker: RunTracker
    /// Sequence number of the next stored fix.
    var nextSequence: Int64 = 1
    /// The `run:` line, sent to late watchers and reconnecting runners.
    var startedLine: [UInt8]?
    /// The newest `pace:` line, sent to late watchers and reconnecting runners.
    var latestPaceLine: [UInt8]?
    /// The run's `badge:` lines so far, for late watchers and coaches (at most 4 tiers of 33 badges).
    var badgeLines: [[UInt8]] = []
    /// The `point:` lines of the run's course points passed so far, for late watchers (at most
    /// ``LiveRun/keptPoints``).
    var pointLines: [[UInt8]] = []
    /// How many `point:` lines a run keeps: every point of any real course (a marathon's kilometre marks and
    /// aid stations are about 50), while a course file of thousands of points cannot grow a run without bound.
    static let keptPoints = 500
    /// The newest cheers about the run (at most ``LiveRun/keptCheers``), for a late web viewer.
    var cheerLines: [[UInt8]] = []
    /// How many cheers a run keeps for late viewers.
    static let keptCheers = 20
    /// The greatest plausible fix timestamp handed to the store (the ack mark), and its text as the runner sent it.
    /// A fix stamped beyond the future allowance never moves it: an ack covers every older fix, and one bogus
    /// far-future stamp must not make the phone forget fixes the server has not stored yet.
    var newestSubmitted: (timestamp: Double, text: String)?
    /// Timestamps of filtered fixes recorded above the last accepted one, so a resent filtered fix is skipped
    /// rather than stored twice (fixes at or below the last accepted one are skipped anyway).
    var filteredAboveLastAccepted: Set<Double> = []
    /// The newest ack text the store has committed.
    var committedAcknowledgement: String?
    /// When the runner's connection went away; the run is ended after the resume window.
    var disconnectedAt: Double?
    /// When a phone app last posted a position for the run (server clock); nil for a run fed over TCP only.
    /// Such a run ends after ``ServerConfiguration/deviceIdle`` without one.
    var lastDeviceFixAt: Double?
    /// Reasons already explained with `note:` while waiting for the first accepted fix (each told once).
    var notedReasons: Set<FixRejection> = []
    /// The goal's pace watch (a goal with a target time only), made anew when the goal changes.
    var offPace: OffPaceMonitor?
    /// Where the run is on its course (`course:`, or the server's), matched fix by fix; nil off any course.
    var course: CourseMatcher?
    /// The course this run left with `course:off`, kept so that following it again in the same run goes on
    /// where it was (its points passed are not passed again).
    var courseSetAside: CourseMatcher?
    /// The course fields of the latest pace (kept for a pace made without a new match: a remeasure).
    var courseFields: PaceCourse?
    /// The latest course update (every upcoming point's ETA), for the pages' JSON.
    var lastCourseUpdate: CourseUpdate?
    /// With a privacy zone: the positions others see of this run (see ``PrivacyZone``).
    var zoneDelay: PrivacyZone.Delay?
    /// Distance and elapsed time of the previous `pace:`, where checkpoint crossings are interpolated from.
    var lastAnnounced: (distance: Double, elapsed: Double) = (0, 0)
    /// The phone's newest battery level (percent) and the timestamp of the position that carried it.
    var battery: (level: Double, time: Double)?
    /// True once `battery_low` was raised, until the level is back to 20 % (so it is raised once per fall).
    var isBatteryLow = false
    /// The level the last `battery` / `battery_low` alert carried.
    var announcedBattery: Double?
    /// The run's newest `alert: kind=sos` and `kind=battery|battery_low`, for late followers.
    var sosAlert: DeviceAlertLines?
    var batteryAlert: DeviceAlertLines?

    /// The runner's badge history when the run began (what its awards are judged against).
    let startHistory: BadgeHistory

    /// The tracker's held stale first fix as stored: to store it again as `stale` when the next fix shows it was
    /// a cached position, and its text for `run:` when it starts the run.
    var heldStart: (fix: Fix, sequence: Int64, received: Double, text: String)?
    /// Every fix stored for the run, in time order (runs fed by phone apps, and recovered runs): what the run is
    /// measured again from when positions arrive late. Nil for a run fed only over TCP, whose fixes older than
    /// the newest are filtered `out_of_order` as ever.
    var log: RunLog?
    /// When a position older than the run's newest last arrived: the run is measured again from ``log`` once
    /// they stop coming for a second, and before it ends.
    var lateArrival: Double?
    /// The highest fix sequence the store has committed (phone apps' answers wait for theirs).
    var committedSequence: Int64 = 0
    /// Splits announced so far (a run measured again announces only the ones it did not have).
    var announcedSplits = 0
    /// When a position caught up on a backlog was last announced: the board is updated once the burst is over.
    var catchUpAt: Double?

    init(tracker: RunTracker) {
        self.tracker = tracker
        startHistory = tracker.history
    }

    /// The run id once started.
    var id: Int64? {
        if case .running(let id, _) = phase { return id }
        return nil
    }

    /// The id its fixes are stored under: once started, or while holding a stale first fix.
    var storedID: Int64? {
        switch phase {
        case .waiting: nil
        case .holding(let id), .running(let id, _): id
        }
    }
}
