/// The lag window's pass after each smoothing: committing the steps that have left it and rebuilding the
/// provisional tail. It runs on every fix over every step of the window, so it is the tracker's hot path:
/// it reads the smoother's steps and writes the track in place through buffer pointers.
extension RunTracker {
    /// The most steps the lag window holds (see ``TrackerConfiguration/smoothingLagFixes``).
    var lagWindowCapacity: Int { max(configuration.smoothingLagFixes, 1) }

    /// Steps in the lag window now (at most ``lagWindowCapacity`` between fixes).
    var lagWindowCount: Int { smoother.count }

    /// Finds the still/moving gate's past point for the step just added: the newest point of the track
    /// before it that is at least half a gate window older (the first point when there is none). It depends
    /// only on timestamps, so it is found once per step, with a cursor that only moves forward.
    mutating func placeGatePastOfNewestStep() {
        let windowIndex = smoother.count - 1
        let trackIndex = committed.count + windowIndex
        let cutoff = smoother.timestamp(at: windowIndex) - configuration.gateWindow / 2
        func timestamp(_ index: Int) -> Double {
            index < committed.count ? committed[index].timestamp : smoother.timestamp(at: index - committed.count)
        }
        while gatePastCursor + 1 < trackIndex, timestamp(gatePastCursor + 1) <= cutoff { gatePastCursor += 1 }
        smoother.setNewestGatePast(gatePastCursor)
    }

    /// Walks the lag window after a smoothing, oldest step first, judging each step with the still/moving
    /// gate and measuring it: the oldest `commitCount` steps become final track points, measured on the
    /// ellipsoid (see ``SegmentMeter``), and leave the window; the rest are rebuilt as the provisional tail,
    /// overwriting the previous tail's storage in place.
    mutating func advanceWindow(committing commitCount: Int) {
        let count = smoother.count
        guard let projection, count > 0 else {
            tail.removeAll(keepingCapacity: true)
            return
        }
        if commitCount < count {
            // The tail spans seconds of running, so one local scale turns frame metres into true metres for
            // all of it; it is recomputed only when the runner has moved about 100 m north or south (the
            // scale changes by a few parts in 10⁵ over that: a fraction of a millimetre on a provisional tail).
            let latitude = projection.latitude(north: smoother.smoothed(at: count - 1)[2])
            if abs(latitude - tailScale.latitude) > 0.001 {
                let scale = LocalScale(latitude: latitude)
                tailScale = (latitude, scale.metresPerDegreeEast / projection.metresPerDegreeEast,
                             scale.metresPerDegreeNorth / projection.metresPerDegreeNorth)
            }
        }
        // Both arrays are moved out while the pass writes them, so they are unique and the writes never copy.
        var points: [TrackPoint] = [], commits: [TrackPoint] = []
        swap(&points, &tail)
        swap(&commits, &commitBuffer)
        Self.resize(&points, to: count - commitCount)
        Self.resize(&commits, to: commitCount)
        var pass = WindowPass(gate: GatePass(configuration, segmentStart: gateSegmentStart, moving: committedMoving),
                              commitCount: commitCount, projection: projection,
                              tailScale: (tailScale.eastRatio, tailScale.northRatio),
                              segmentMeter: segmentMeter, lastCommittedCoordinate: lastCommittedCoordinate)
        // Where the last pass's first step found its future end is a valid start for this one's (see
        // ``GatePass``): it saves walking the whole window again on every fix.
        pass.gate.future = max(windowGateFuture - committed.count, 0)
        pass.run(over: smoother, after: committed, committing: &commits, tail: &points)
        windowGateFuture = committed.count + pass.firstFuture
        if commitCount > 0 {
            segmentMeter = pass.segmentMeter
            committedMoving = pass.committedMoving
            lastCommittedCoordinate = pass.lastCommittedCoordinate
            for point in commits { committed.append(point) }
            smoother.dropOldest(commitCount)
        }
        swap(&points, &tail)
        swap(&commits, &commitBuffer)
    }

    /// Sizes an array of points to be overwritten, keeping its storage.
    @inline(__always)
    private static func resize(_ points: inout [TrackPoint], to count: Int) {
        if points.count > count { points.removeLast(points.count - count) }
        while points.count < count { points.append(TrackPoint.placeholder) }
    }
}

/// One walk along the lag window (see ``RunTracker/advanceWindow(committing:)``), as a value with its own
/// state, so that its loop captures nothing of the tracker: a closure capturing the tracker makes the
/// compiler retain the arrays it reads, twice per fix.
struct WindowPass {
    var gate: GatePass
    /// How many of the oldest steps become final points.
    let commitCount: Int
    let projection: LocalProjection
    /// Frame-to-true scale ratios for the provisional tail.
    let tailScale: (east: Double, north: Double)
    var segmentMeter: SegmentMeter
    /// The coordinate of the newest final point.
    var lastCommittedCoordinate: Coordinate?
    /// The gate's state at the newest final point.
    var committedMoving = false
    /// The gate's future cursor for the window's first step.
    var firstFuture = 0

    /// Writes one point per step of `window`: the oldest into `commits`, the rest into `tail` (both already
    /// sized); `committed` is the final track before the window.
    mutating func run(over window: KalmanSmoother, after committed: [TrackPoint], committing commits: inout [TrackPoint],
                      tail: inout [TrackPoint]) {
        window.withWindow { steps in
            committed.withUnsafeBufferPointer { committed in
                commits.withUnsafeMutableBufferPointer { commits in
                    tail.withUnsafeMutableBufferPointer { tail in
                        walk(steps, after: committed, committing: commits, tail: tail)
                    }
                }
            }
        }
    }

    @inline(__always)
    private mutating func walk(_ steps: UnsafeBufferPointer<KalmanSmoother.Step>, after committed: UnsafeBufferPointer<TrackPoint>,
                               committing commits: UnsafeMutableBufferPointer<TrackPoint>,
                               tail: UnsafeMutableBufferPointer<TrackPoint>) {
        guard let base = steps.baseAddress else { return }
        let track = WindowTrack(committed: committed, commits: commits, tail: tail)
        var previous = committed.last
        for index in 0..<steps.count {
            let moving = gate.judge(step: index, at: committed.count + index, of: steps, track: track)
            if index == 0 { firstFuture = gate.future }
            let step = base + index
            let state = step.pointee.smoothed
            var point = TrackPoint(east: state[0], north: state[2], timestamp: step.pointee.timestamp,
                                   accuracy: step.pointee.accuracy, moving: moving, distance: 0, movingTime: 0)
            let measured = moving && !step.pointee.startsSegment
            if index < commitCount {
                let coordinate = projection.coordinate(east: point.east, north: point.north)
                if let previous {
                    point.distance = previous.distance
                    point.movingTime = previous.movingTime
                    if measured, let lastCommittedCoordinate {
                        point.distance += segmentMeter.distance(from: lastCommittedCoordinate, to: coordinate)
                        point.movingTime += point.timestamp - previous.timestamp
                    }
                }
                lastCommittedCoordinate = coordinate
                committedMoving = moving
                commits[index] = point
            } else {
                if let previous {
                    point.distance = previous.distance
                    point.movingTime = previous.movingTime
                    if measured {
                        let east = (point.east - previous.east) * tailScale.east
                        let north = (point.north - previous.north) * tailScale.north
                        point.distance += (east * east + north * north).squareRoot()
                        point.movingTime += point.timestamp - previous.timestamp
                    }
                }
                tail[index - commitCount] = point
            }
            previous = point
        }
    }
}

/// The track as a walk along the window sees it: the final track, then the points written so far for the
/// window's steps (those being committed, then the tail).
struct WindowTrack {
    let committed: UnsafeBufferPointer<TrackPoint>
    let commits: UnsafeMutableBufferPointer<TrackPoint>
    let tail: UnsafeMutableBufferPointer<TrackPoint>

    /// The point at `index` in the track (it must be written already).
    @inline(__always)
    subscript(index: Int) -> TrackPoint {
        if index < committed.count { return committed[index] }
        let windowIndex = index - committed.count
        return windowIndex < commits.count ? commits[windowIndex] : tail[windowIndex - commits.count]
    }
}

/// One pass of the still/moving gate along the lag window, oldest step first.
///
/// The gate's speed for a step is the smoothed displacement across a window of
/// ``TrackerConfiguration/gateWindow`` seconds centred on it (as far as fixes exist), over its span.
/// A centred window switches the gate on as the runner sets off, not half a window later, and its
/// length averages out the slow wander of GPS error that a runner standing still would otherwise
/// turn into distance. The gate then says moving or still with hysteresis.
///
/// The window's start is the step's past point in the track (committed then tail), found once per step
/// (``KalmanSmoother/Step/gatePast``); its end is the newest step at most half a window later with no
/// restart in between, found with `future`, a cursor into the smoother's window that only moves forward.
/// Where it lands depends only on timestamps and restarts, which never change for a step, so the end found
/// for an earlier step is a valid start for a later one, in this pass or the next.
struct GatePass {
    /// Half the gate's window, seconds.
    let half: Double
    /// Speeds that stop and start the runner, m/s.
    let stillSpeed: Double, movingSpeed: Double
    /// Index of the first track point of the current segment (after a re-anchor, the earlier ones are not
    /// used by the gate).
    let segmentStart: Int
    /// Cursor into the window: the newest step at most half a window after the step.
    var future = 0
    /// The gate's state after the last step judged.
    var moving: Bool

    init(_ configuration: TrackerConfiguration, segmentStart: Int, moving: Bool) {
        half = configuration.gateWindow / 2
        stillSpeed = configuration.stillSpeed
        movingSpeed = configuration.movingSpeed
        self.segmentStart = segmentStart
        self.moving = moving
    }

    /// Judges the step at `index` of the window, which is at `trackIndex` in `track`, and says whether the
    /// runner is moving there.
    @inline(__always)
    mutating func judge(step index: Int, at trackIndex: Int, of steps: UnsafeBufferPointer<KalmanSmoother.Step>,
                        track: WindowTrack) -> Bool {
        let speed = self.speed(ofStep: index, at: trackIndex, of: steps, track: track)
        moving = moving ? speed >= stillSpeed : speed >= movingSpeed
        return moving
    }

    @inline(__always)
    private mutating func speed(ofStep index: Int, at trackIndex: Int, of steps: UnsafeBufferPointer<KalmanSmoother.Step>,
                                track: WindowTrack) -> Double {
        let base = steps.baseAddress!, count = steps.count
        let step = base + index
        let timestamp = step.pointee.timestamp
        let horizon = timestamp + half
        future = max(future, index)
        while future + 1 < count, base[future + 1].timestamp <= horizon, !base[future + 1].startsSegment {
            future += 1
        }
        let state = step.pointee.smoothed
        var fromTime = timestamp, fromEast = state[0], fromNorth = state[2]
        let past = step.pointee.gatePast
        if !step.pointee.startsSegment, past < trackIndex, past >= segmentStart {
            let p = track[past]
            if p.timestamp < timestamp { (fromTime, fromEast, fromNorth) = (p.timestamp, p.east, p.north) }
        }
        let end = base + future
        let span = end.pointee.timestamp - fromTime
        guard span > 0 else { return 0 }
        let to = end.pointee.smoothed
        let east = to[0] - fromEast, north = to[2] - fromNorth
        return (east * east + north * north).squareRoot() / span
    }
}
