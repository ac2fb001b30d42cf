import Foundation

/// Takes a run's fixes one at a time and says what happened: filtering, smoothing, metrics, splits, badges.
///
/// **What "distance" means.** The run's distance is the length of the smoothed track, counted only while
/// the runner is moving. Accepted fixes go through a constant-velocity Kalman filter (east/north metres
/// around the first fix, measurement error from the reported accuracy, process noise rising with the
/// filtered speed, so walking is smoothed harder than running) and a fixed-lag Rauch–Tung–Striebel
/// smoother over the last ``TrackerConfiguration/smoothingLag`` seconds (and at most
/// ``TrackerConfiguration/smoothingLagFixes`` fixes, so fixes sent flat out cost bounded work each).
/// Points older than the lag have their final position, measured geodesically on the WGS84 ellipsoid.
///
/// **What "moving" means.** Two decisions, one per regime. A short gate on the smoothed speed across
/// ``TrackerConfiguration/gateWindow`` seconds and across each of its halves (the slowest, with hysteresis)
/// decides at running pace. A long horizon of
/// ``TrackerConfiguration/settlingHorizon`` seconds (see ``SettlingTrack``) decides what the short gate
/// cannot tell from GPS drift: a standing runner's drift wanders around a point, a walker at 0.5 m/s goes
/// 30 m a minute; it also marks long stops and the edges of stops. Points wait for that decision on the
/// settling track, so at walking pace live values stay provisional for up to the horizon plus the lag;
/// at running pace the short gate has already decided and they rarely change. ``finish()`` reports the
/// track as it stands after the last fix (the newest points with the decision carried to them); that is
/// the final distance.
///
/// **Silences.** A gap between fixes crossed at walking pace or slower is a pause, found from the gap's own
/// distance and time (see ``FilterConfiguration/pauseGap``): a watch on auto-pause says nothing while its
/// wearer stands, and the straight step across the silence would otherwise count all of it as moving.
///
/// The tracker is a value: feeding the same `(fix, now)` sequence to a fresh tracker with the same
/// history gives identical outcomes, which the server relies on to recover runs after a crash.
public struct RunTracker: Sendable {
    /// The configuration in force.
    public let configuration: TrackerConfiguration
    /// The runner's badge history, updated as awards are made.
    public internal(set) var history: BadgeHistory
    /// Fixes rejected so far, by reason.
    public internal(set) var rejections: [FixRejection: Int] = [:]
    /// Timestamp of the last accepted fix, nil before the run started.
    public private(set) var lastAcceptedTimestamp: Double?
    /// A stale first fix waiting for the next fix to say whether it starts the run (see ``FixOutcome/held``).
    public internal(set) var heldStart: Fix?
    /// When ``heldStart`` was received (the receiving clock's `now`).
    var heldAt = 0.0
    /// The held fix the last ``add(_:now:)`` dropped as a cached position (counted `stale`), if it did.
    public internal(set) var droppedStart: Fix?

    var filter: FixFilter
    /// Finds the pauses in the recording's gaps.
    var recordingGaps: RecordingGaps
    var smoother: KalmanSmoother
    var projection: LocalProjection?
    /// Timestamp of the first accepted fix, or the earlier start of the clock (``startClock(at:)``).
    var startTimestamp = 0.0
    /// Where a recording's clock started when its first point may be refused (``startClock(at:)``).
    var clockStart: Double?
    /// Final track points (older than the lag and the settling horizon); only the newest when the tracker
    /// does not keep its track (``TrackerConfiguration/keepsTrack``).
    var committed = FinalTrack()
    /// When the tracker does not keep its track: the splits and checkpoints measured on the final track so
    /// far, and where their search stands (``finish()`` measures the rest on the points not final yet).
    var finalSplits: [Split] = [], finalSplitCounter = SplitCounter()
    var finalCheckpoints: [CheckpointSplit] = [], finalCheckpointCounter = CheckpointCounter()
    /// Points older than the lag whose still/moving verdict awaits the long horizon.
    var settling: SettlingTrack
    /// The settling track's newest point, measured with the judgement as it stands (nil when it is empty).
    var settledNewest: TrackPoint?
    /// The newest settled point a current-pace window before the newest fix (nil when none is settled).
    var settledPaceReference: TrackPoint?
    /// The newest point of the track (the provisional tail's last), measured on every fix; the tail's other
    /// points are rebuilt only when needed (``tailPoints``).
    var newestPoint: TrackPoint?
    /// Storage for the points committed by one pass over the window, kept between fixes.
    var commitBuffer: [SettlingPoint] = []
    /// The short gate's state at the last committed point.
    var committedMoving = false
    /// The smoothed position of the newest committed point, measured from by the next one.
    var lastCommittedCoordinate: Coordinate?
    /// The timestamp of the newest committed point.
    var lastCommittedTimestamp: Double?
    /// Frame-to-true scale ratios for measuring the tail, and the latitude they were computed at.
    var tailScale: (latitude: Double, eastRatio: Double, northRatio: Double) = (.infinity, 1, 1)
    /// Measures committed segments.
    var segmentMeter = SegmentMeter()
    /// Index of the current pace's reference point in the committed track.
    var paceCursor = 0
    /// Where the runner last set off: the current pace's window starts no earlier.
    var settingOff = SettingOffEdge()
    /// The gate's past point of the newest step, as an index into the track (see ``GatePass``).
    var gatePastCursor = 0
    /// The gate's future cursor for the first step of the last pass over the window, as an index into the track.
    var windowGateFuture = 0
    /// Index of the first track point of the current segment (after a re-anchor, the earlier ones are not
    /// used by the gate).
    var gateSegmentStart = 0
    var splitCounter = SplitCounter()
    /// Index in ``Badges/all`` of the next badge to award.
    var nextBadgeIndex = 1
    var awards: [BadgeAward] = []
    /// The current pace at the last accepted fix (the rest of the snapshot is read off the track).
    var latestCurrentPace: Double?
    /// Elevation gain and loss of the accepted fixes' altitudes.
    public internal(set) var elevation = ElevationMeter()
    /// Index in ``Badges/all`` of the first badge farther than the live distance; a cursor, because the
    /// distance moves by metres per fix (and may settle back a little).
    var nextBadgeCursor = 0

    /// Starts a tracker for one run of a runner with this badge history.
    public init(configuration: TrackerConfiguration = .init(), history: BadgeHistory = .init()) {
        self.configuration = configuration
        self.history = history
        filter = FixFilter(configuration: configuration.filter)
        recordingGaps = RecordingGaps(configuration: configuration.filter)
        smoother = KalmanSmoother(configuration)
        settling = SettlingTrack(configuration)
    }

    /// One fix through the filter and, when accepted, the measurements (``add(_:now:)`` without the held start).
    mutating func admit(_ fix: Fix, now: Double) -> FixOutcome {
        let verdict = filter.judge(fix, now: now)
        if case .reject(let reason) = verdict {
            rejections[reason, default: 0] += 1
            return .rejected(reason)
        }
        let started = projection == nil
        if started {
            projection = LocalProjection(origin: fix.coordinate)
            startTimestamp = min(fix.timestamp, clockStart ?? fix.timestamp)
        } else if verdict == .reanchor {
            advanceWindow(committing: smoother.count)
            gateSegmentStart = settledCount
        }
        let position = projection!.project(fix.coordinate)
        smoother.update(east: position.east, north: position.north, accuracy: fix.accuracy,
                        timestamp: fix.timestamp, restart: started || verdict == .reanchor)
        placeGatePastOfNewestStep()
        smoother.smooth()
        // Steps leave the window after the lag, or earlier when fixes come so fast that it would hold more
        // than its capacity: each fix then costs bounded work whatever the timestamps say.
        advanceWindow(committing: max(smoother.committableCount(through: fix.timestamp - configuration.smoothingLag),
                                      smoother.count - lagWindowCapacity))
        lastAcceptedTimestamp = fix.timestamp
        if let altitude = fix.altitude { elevation.add(altitude: altitude, timestamp: fix.timestamp) }

        var newAwards: [BadgeAward] = []
        if started, let earth = Badges.all.first {
            newAwards += award(earth, crossing: Crossing(timestamp: fix.timestamp, east: position.east, north: position.north))
        }
        // The whole track (committed and tail) is looked at only when a split or badge is reached: on most
        // fixes the newest point says everything.
        let last = newestPoint!
        let distance = last.distance
        var splits: [Split] = [], reachedTrack: LiveTrack?
        if splitCounter.isDue(at: distance) {
            reachedTrack = liveTrack
            splits = splitCounter.collect(upTo: distance, start: startTimestamp, on: reachedTrack!)
        }
        if nextBadgeIndex < Badges.all.count, distance >= Badges.all[nextBadgeIndex].distance {
            let track = reachedTrack ?? liveTrack
            while nextBadgeIndex < Badges.all.count, distance >= Badges.all[nextBadgeIndex].distance,
                  let crossing = track.crossing(of: Badges.all[nextBadgeIndex].distance) {
                newAwards += award(Badges.all[nextBadgeIndex], crossing: crossing)
                nextBadgeIndex += 1
            }
            awards += newAwards
        } else if !newAwards.isEmpty {
            awards += newAwards
        }
        measureLive(at: last)
        if !configuration.keepsTrack { forgetUnreachablePoints() }
        var snapshot = Self.snapshot(at: last, currentPace: latestCurrentPace, start: startTimestamp,
                                     projection: projection, nextBadge: nextBadgeCursor)
        if elevation.hasAltitude {
            snapshot.elevationGain = elevation.gain
            snapshot.elevationLoss = elevation.loss
        }
        return .accepted(RunProgress(started: started, snapshot: snapshot, awards: newAwards, splits: splits))
    }

    /// The latest measurements, nil before the first accepted fix.
    public var snapshot: RunSnapshot? {
        guard let last = newestPoint else { return nil }
        var snapshot = snapshot(at: last, currentPace: latestCurrentPace)
        snapshot.elevationGain = elevation.measuredGain
        snapshot.elevationLoss = elevation.measuredLoss
        return snapshot
    }

    /// Every award made so far in this run, in order.
    public var runAwards: [BadgeAward] { awards }

    /// Ends the run: final smoothing of the whole track, then the summary.
    ///
    /// The committed and settling points were smoothed with at least the lag's worth of later fixes, which is
    /// several times the smoother's memory, and the tail is smoothed over every fix received, so this is the
    /// smoothed track; splits and checkpoints are measured on it. Awards are the ones made live (they already
    /// updated ``history``).
    ///
    /// When the tracker does not keep its track (``TrackerConfiguration/keepsTrack`` false) every value is
    /// the same, but the summary's `track` holds only the points kept: the newest minute or so of the run.
    public func finish() -> RunSummary {
        let track = liveTrack
        guard let last = track.last else {
            return RunSummary(distance: 0, elapsed: 0, movingTime: 0, averagePace: nil, splits: [], checkpoints: [],
                              awards: awards, track: [], rejections: rejections)
        }
        let splits: [Split], checkpoints: [CheckpointSplit]
        if configuration.keepsTrack {
            var counter = SplitCounter()
            splits = counter.collect(upTo: last.distance, start: startTimestamp, on: track)
            checkpoints = self.checkpoints(on: track)
        } else {
            (splits, checkpoints) = measuredToEnd(of: track)
        }
        return RunSummary(distance: last.distance, elapsed: last.timestamp - startTimestamp,
                          movingTime: last.movingTime, averagePace: Self.pace(last.movingTime, last.distance),
                          splits: splits, checkpoints: checkpoints, awards: awards,
                          track: (track.committed.keptPoints + track.tail).map { $0.fix(in: projection!) },
                          rejections: rejections, elevationGain: elevation.measuredGain,
                          elevationLoss: elevation.measuredLoss)
    }

    /// Seconds per kilometre, nil without distance.
    static func pace(_ seconds: Double, _ metres: Double) -> Double? {
        metres > 0 ? seconds / metres * 1000 : nil
    }
}
