/// The lag window's two passes after each smoothing: committing the steps that have left it, and rebuilding
/// the provisional tail. Both walk the smoother's steps and the built track in place through buffer pointers:
/// they run on every fix over every step of the window, so they are the tracker's hot path.
extension RunTracker {
    /// Moves the oldest `count` smoothed steps out of the lag window into the final track, measuring each
    /// segment on the ellipsoid (see ``SegmentMeter``).
    mutating func commitSteps(_ count: Int) {
        guard count > 0, let projection else { return }
        var gate = GatePass(configuration, segmentStart: gateSegmentStart, past: committedGatePast,
                            moving: committedMoving)
        var previousCoordinate = lastCommittedCoordinate
        for index in 0..<count {
            let moving = smoother.withWindow { steps in
                committed.withUnsafeBufferPointer { built in
                    gate.judge(step: index, of: steps, committed: built, tail: nil, builtCount: built.count)
                }
            }
            let step = smoother[index]
            let coordinate = projection.coordinate(east: step.smoothed[0], north: step.smoothed[2])
            var point = TrackPoint(east: step.smoothed[0], north: step.smoothed[2], timestamp: step.timestamp,
                                   accuracy: step.accuracy, moving: moving, distance: 0, movingTime: 0)
            if let previous = committed.last {
                point.distance = previous.distance
                point.movingTime = previous.movingTime
                if moving, !step.startsSegment, let previousCoordinate {
                    point.distance += segmentMeter.distance(from: previousCoordinate, to: coordinate)
                    point.movingTime += point.timestamp - previous.timestamp
                }
            }
            committed.append(point)
            previousCoordinate = coordinate
        }
        committedGatePast = gate.past
        committedMoving = gate.moving
        lastCommittedCoordinate = previousCoordinate
        smoother.dropOldest(count)
    }

    /// Rebuilds the provisional points of the lag window from the latest smoothing, overwriting the previous
    /// tail's storage in place.
    mutating func rebuildTail() {
        let count = smoother.count
        guard let projection, count > 0 else {
            tail.removeAll(keepingCapacity: true)
            return
        }
        // The tail spans seconds of running, so one local scale turns frame metres into true metres for all
        // of it; it is recomputed only when the runner has moved about 100 m north or south (the scale
        // changes by a few parts in 10⁵ over that: a fraction of a millimetre on a provisional tail).
        let latitude = projection.latitude(north: smoother.smoothed(at: count - 1)[2])
        if abs(latitude - tailScale.latitude) > 0.001 {
            let scale = LocalScale(latitude: latitude)
            tailScale = (latitude, scale.metresPerDegreeEast / projection.metresPerDegreeEast,
                         scale.metresPerDegreeNorth / projection.metresPerDegreeNorth)
        }
        let eastRatio = tailScale.eastRatio, northRatio = tailScale.northRatio
        var points: [TrackPoint] = []
        swap(&points, &tail)  // unique, so the writes below do not copy it
        if points.count > count { points.removeLast(points.count - count) }
        while points.count < count { points.append(TrackPoint.placeholder) }
        // The cursors where the last rebuild's first step found its gate window are valid starting points
        // for this one's (see ``GatePass``), which saves walking the whole window again on every fix.
        var gate = GatePass(configuration, segmentStart: gateSegmentStart,
                            past: max(committedGatePast, tailGateStart.past), moving: committedMoving)
        gate.future = max(tailGateStart.future - committed.count, 0)
        var firstStepGate = tailGateStart
        smoother.withWindow { steps in
            committed.withUnsafeBufferPointer { committed in
                points.withUnsafeMutableBufferPointer { out in
                    var previous = committed.last
                    for index in 0..<count {
                        let moving = gate.judge(step: index, of: steps, committed: committed,
                                                tail: UnsafePointer(out.baseAddress), builtCount: committed.count + index)
                        let step = steps.baseAddress! + index
                        let state = step.pointee.smoothed
                        var point = TrackPoint(east: state[0], north: state[2], timestamp: step.pointee.timestamp,
                                               accuracy: step.pointee.accuracy, moving: moving, distance: 0,
                                               movingTime: 0)
                        if let previous {
                            point.distance = previous.distance
                            point.movingTime = previous.movingTime
                            if moving, !step.pointee.startsSegment {
                                let east = (point.east - previous.east) * eastRatio
                                let north = (point.north - previous.north) * northRatio
                                point.distance += (east * east + north * north).squareRoot()
                                point.movingTime += point.timestamp - previous.timestamp
                            }
                        }
                        out[index] = point
                        previous = point
                        if index == 0 { firstStepGate = (gate.past, committed.count + gate.future) }
                    }
                }
            }
        }
        swap(&points, &tail)
        tailGateStart = firstStepGate
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
/// `past` is a cursor into the built track (committed then tail) that only moves forward, and
/// `future` a cursor into the smoother's window, so each fix costs a few steps, not a search.
/// Where a cursor lands depends only on timestamps (and segment starts), which never change for a step,
/// and a point keeps its index in the built track when it moves from the tail to the committed track.
/// So any cursor found for an earlier step is a valid start for a later one: the walk from it lands on
/// the same point as the walk from the pass's start.
struct GatePass {
    /// Half the gate's window, seconds.
    let half: Double
    /// Speeds that stop and start the runner, m/s.
    let stillSpeed: Double, movingSpeed: Double
    /// Index of the first built point of the current segment (after a re-anchor, the earlier ones are not
    /// used by the gate).
    let segmentStart: Int
    /// Cursor into the built track: the newest point at least half a window before the step.
    var past: Int
    /// Cursor into the window: the newest step at most half a window after the step.
    var future = 0
    /// The gate's state after the last step judged.
    var moving: Bool

    init(_ configuration: TrackerConfiguration, segmentStart: Int, past: Int, moving: Bool) {
        half = configuration.gateWindow / 2
        stillSpeed = configuration.stillSpeed
        movingSpeed = configuration.movingSpeed
        self.segmentStart = segmentStart
        self.past = past
        self.moving = moving
    }

    /// Judges the step at `index` of the window and says whether the runner is moving there. The built
    /// track is `committed` followed by the first `builtCount - committed.count` points at `tail`.
    @inline(__always)
    mutating func judge(step index: Int, of steps: UnsafeBufferPointer<KalmanSmoother.Step>,
                        committed: UnsafeBufferPointer<TrackPoint>, tail: UnsafePointer<TrackPoint>?,
                        builtCount: Int) -> Bool {
        let speed = self.speed(ofStep: index, of: steps, committed: committed, tail: tail, builtCount: builtCount)
        moving = moving ? speed >= stillSpeed : speed >= movingSpeed
        return moving
    }

    @inline(__always)
    private mutating func speed(ofStep index: Int, of steps: UnsafeBufferPointer<KalmanSmoother.Step>,
                                committed: UnsafeBufferPointer<TrackPoint>, tail: UnsafePointer<TrackPoint>?,
                                builtCount: Int) -> Double {
        let base = steps.baseAddress!
        let timestamp = base[index].timestamp, state = base[index].smoothed
        future = max(future, index)
        while future + 1 < steps.count, base[future + 1].timestamp <= timestamp + half,
              !base[future + 1].startsSegment { future += 1 }
        let committedCount = committed.count
        @inline(__always) func built(_ i: Int) -> UnsafePointer<TrackPoint> {
            i < committedCount ? committed.baseAddress! + i : tail! + (i - committedCount)
        }
        // The committed track first, on its own: the common case, and a tight loop.
        let committedLimit = min(builtCount, committedCount)
        while past + 1 < committedLimit, committed[past + 1].timestamp <= timestamp - half { past += 1 }
        if past + 1 >= committedCount {
            while past + 1 < builtCount, built(past + 1).pointee.timestamp <= timestamp - half { past += 1 }
        }
        var fromTime = timestamp, fromEast = state[0], fromNorth = state[2]
        if !base[index].startsSegment, past < builtCount, past >= segmentStart {
            let p = built(past)
            if p.pointee.timestamp < timestamp {
                (fromTime, fromEast, fromNorth) = (p.pointee.timestamp, p.pointee.east, p.pointee.north)
            }
        }
        let span = base[future].timestamp - fromTime
        guard span > 0 else { return 0 }
        let to = base[future].smoothed
        let east = to[0] - fromEast, north = to[2] - fromNorth
        return (east * east + north * north).squareRoot() / span
    }
}
