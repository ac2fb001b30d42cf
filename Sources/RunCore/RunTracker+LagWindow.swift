/// The lag window's pass after each smoothing: committing the steps that have left it (to the settling
/// track, where the long-horizon still/moving decision is made) and measuring the provisional tail. It runs
/// on every fix over every step of the window, so it is the tracker's hot path: it reads the smoother's
/// steps in place through buffer pointers, and it does not store the tail: on almost every fix only the
/// newest point is needed, and the tail's points are a function of the state (the window, the settled
/// track, the gate's state), so they are rebuilt, identically, when a search needs them (``tailPoints``).
extension RunTracker {
    /// The most steps the lag window holds (see ``TrackerConfiguration/smoothingLagFixes``).
    var lagWindowCapacity: Int { max(configuration.smoothingLagFixes, 1) }

    /// Steps in the lag window now (at most ``lagWindowCapacity`` between fixes).
    var lagWindowCount: Int { smoother.count }

    /// Track index of the lag window's first step: the final points, then the settling ones, come before it.
    var settledCount: Int { settling.endIndex }

    /// Finds the still/moving gate's past point for the step just added: the newest point of the track
    /// before it that is at least half a gate window older (the first point when there is none). It depends
    /// only on timestamps, so it is found once per step, with a cursor that only moves forward.
    mutating func placeGatePastOfNewestStep() {
        let settled = settledCount
        let windowIndex = smoother.count - 1
        let trackIndex = settled + windowIndex
        let cutoff = smoother.timestamp(at: windowIndex) - configuration.gateWindow / 2
        func timestamp(_ index: Int) -> Double {
            if index < committed.count { return committed[index].timestamp }
            if index < settled { return settling.point(at: index).timestamp }
            return smoother.timestamp(at: index - settled)
        }
        while gatePastCursor + 1 < trackIndex, timestamp(gatePastCursor + 1) <= cutoff { gatePastCursor += 1 }
        smoother.setNewestGatePast(gatePastCursor)
    }

    /// Walks the lag window after a smoothing, oldest step first, judging each step with the short
    /// still/moving gate: the oldest `commitCount` steps are measured on the ellipsoid (see
    /// ``SegmentMeter``), leave the window and join the settling track (which hands the points it has
    /// decided to the final track); the rest are the provisional tail, of which only the newest point is kept.
    mutating func advanceWindow(committing commitCount: Int) {
        let count = smoother.count
        guard let projection, count > 0 else { return }
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
        var pass = makePass(projection: projection)
        // Where the last pass's first step found its future end is a valid start for this one's (see
        // ``GatePass``): it saves walking the whole window again on every fix.
        pass.gate.future = max(windowGateFuture - settledCount, 0)
        if commitCount > 0 {
            // Moved out while the pass writes it, so it is unique and the writes never copy it.
            var commits: [SettlingPoint] = []
            swap(&commits, &commitBuffer)
            commits.removeAll(keepingCapacity: true)
            pass.commit(commitCount, over: smoother, committed: committed, settling: settling, into: &commits)
            segmentMeter = pass.segmentMeter
            committedMoving = pass.gate.moving
            lastCommittedCoordinate = pass.lastCommittedCoordinate
            lastCommittedTimestamp = pass.lastCommittedTimestamp
            let newestStep = smoother.count - 1
            let newestState = smoother.smoothed(at: newestStep)
            let newestFix = SettingOffEdge.Position(timestamp: smoother.timestamp(at: newestStep), east: newestState[0],
                                                    north: newestState[2])
            for point in commits {
                if point.interval == 0 { settingOff.restart() }
                settingOff.observe(.init(timestamp: point.timestamp, east: point.east, north: point.north),
                                   newestFix: newestFix)
                settling.append(point, segmentStart: gateSegmentStart, final: committed)
            }
            settling.settle(into: &committed)
            if !configuration.keepsTrack { measureFinalPoints() }
            smoother.dropOldest(commitCount)
            pass.gate.future = max(pass.gate.future - commitCount, 0)
            swap(&commits, &commitBuffer)
        }
        // The current pace's window ends at the newest fix: in the window, or just committed (a re-anchor
        // commits all of it).
        let newestTimestamp = smoother.count > 0 ? smoother.timestamp(at: smoother.count - 1)
                                                 : lastCommittedTimestamp ?? 0
        let settled = settling.measureNewest(atOrBefore: newestTimestamp - configuration.currentPaceWindow)
        settledNewest = settled.newest
        settledPaceReference = settled.reference
        guard smoother.count > 0 else {
            newestPoint = settledNewest
            windowGateFuture = settledCount
            return
        }
        pass.setTailRule(settling)
        pass.measureTail(over: smoother, after: settledNewest, committed: committed, settling: settling, into: nil)
        windowGateFuture = settledCount + pass.firstFuture
        newestPoint = pass.newest
    }

    /// The provisional tail: one point per step of the lag window, as the last fix's pass measured them.
    var tailPoints: [TrackPoint] {
        let count = smoother.count
        guard let projection, count > 0 else { return [] }
        var pass = makePass(projection: projection)
        pass.gate.future = max(windowGateFuture - settledCount, 0)
        pass.setTailRule(settling)
        return [TrackPoint](unsafeUninitializedCapacity: count) { buffer, initialized in
            pass.measureTail(over: smoother, after: settledNewest, committed: committed, settling: settling,
                             into: buffer.baseAddress)
            initialized = count
        }
    }

    /// A pass over the window from the settled track's end.
    private func makePass(projection: LocalProjection) -> WindowPass {
        WindowPass(gate: GatePass(configuration, segmentStart: gateSegmentStart, moving: committedMoving),
                   trackStart: settledCount, projection: projection,
                   tailScale: (tailScale.eastRatio, tailScale.northRatio), segmentMeter: segmentMeter,
                   lastCommittedCoordinate: lastCommittedCoordinate, lastCommittedTimestamp: lastCommittedTimestamp)
    }
}

/// One walk along the lag window (see ``RunTracker/advanceWindow(committing:)``), as a value with its own
/// state, so that its loop captures nothing of the tracker: a closure capturing the tracker makes the
/// compiler retain the arrays it reads, twice per fix.
struct WindowPass {
    /// The short still/moving gate, from its state at the settled track's end.
    var gate: GatePass
    /// Track index of the window's first step.
    var trackStart: Int
    /// The run's frame, to turn final points into coordinates for the segment meter.
    let projection: LocalProjection
    /// Frame-to-true scale ratios for the provisional tail.
    let tailScale: (east: Double, north: Double)
    /// Measures the final segments (its state moves with the runner, so it is handed back).
    var segmentMeter: SegmentMeter
    /// The coordinate of the newest point that left the window.
    var lastCommittedCoordinate: Coordinate?
    /// The timestamp of the newest point that left the window.
    var lastCommittedTimestamp: Double?
    /// The tail's still/moving rule, from the settling track's carried judgement (as for a settling point not
    /// judged yet, see ``SettlingTrack``): whether the short gate may say moving, and the gate speed from
    /// which the carried slow movement counts.
    var gateAllowed = true, slowSpeed = Double.infinity
    /// The gate's future cursor for the tail's first step.
    var firstFuture = 0
    /// The newest point of the track after the walk.
    var newest: TrackPoint?

    /// Takes the tail's rule from the settling track's judgement.
    mutating func setTailRule(_ settling: SettlingTrack) {
        gateAllowed = !settling.carriedStay
        slowSpeed = gateAllowed && settling.carriedSlow ? settling.consistency * settling.carriedNetSpeed : .infinity
    }

    /// Calls `body` with the track as the gate sees it.
    @inline(__always)
    private func withTrack<Result>(_ window: KalmanSmoother, _ committed: FinalTrack, _ settling: SettlingTrack,
                                   _ body: (UnsafeBufferPointer<KalmanSmoother.Step>, WindowTrack) -> Result) -> Result {
        window.withWindow { steps in
            committed.withUnsafeBufferPointer { committed, base in
                settling.points.withUnsafeBufferPointer { all in
                    let settling = UnsafeBufferPointer(rebasing: all[settling.head...])
                    return body(steps, WindowTrack(committed: committed, committedBase: base, settling: settling,
                                                   steps: steps.baseAddress!))
                }
            }
        }
    }

    /// Measures the oldest `commitCount` steps of `window` as final points, appending them to `commits`.
    mutating func commit(_ commitCount: Int, over window: KalmanSmoother, committed: FinalTrack,
                         settling: SettlingTrack, into commits: inout [SettlingPoint]) {
        withTrack(window, committed, settling) { steps, track in
            let base = steps.baseAddress!
            for index in 0..<min(commitCount, steps.count) {
                let reading = gate.reading(ofStep: index, at: trackStart + index, of: steps, track: track)
                let moving = gate.judge(reading)
                let step = base + index
                let state = step.pointee.smoothed
                let coordinate = projection.coordinate(east: state[0], north: state[2])
                var length = 0.0, interval = 0.0
                if !step.pointee.startsSegment, let lastCommittedCoordinate, let lastCommittedTimestamp {
                    length = segmentMeter.distance(from: lastCommittedCoordinate, to: coordinate)
                    interval = step.pointee.timestamp - lastCommittedTimestamp
                }
                lastCommittedCoordinate = coordinate
                lastCommittedTimestamp = step.pointee.timestamp
                commits.append(SettlingPoint(east: state[0], north: state[2], timestamp: step.pointee.timestamp,
                                             accuracy: step.pointee.accuracy, length: length, interval: interval,
                                             gateSpeed: reading.across,
                                             confident: reading.reaches(gate.confidentSpeed),
                                             closing: reading.across >= gate.confidentSpeed, gateMoving: moving))
            }
        }
    }

    /// Measures the window's steps as the provisional tail after `previous` (the settled track's newest
    /// point), keeping the newest and, when `tail` is given, writing every one there.
    mutating func measureTail(over window: KalmanSmoother, after previous: TrackPoint?, committed: FinalTrack,
                              settling: SettlingTrack, into tail: UnsafeMutablePointer<TrackPoint>?) {
        withTrack(window, committed, settling) { steps, track in
            walkTail(steps, track: track, after: previous, into: tail)
        }
    }

    @inline(__always)
    private mutating func walkTail(_ steps: UnsafeBufferPointer<KalmanSmoother.Step>, track: WindowTrack,
                                   after previous: TrackPoint?, into tail: UnsafeMutablePointer<TrackPoint>?) {
        guard let base = steps.baseAddress else { return }
        let count = steps.count
        // The tail in two loops: first what does not depend on the gate's state (each step's gate speed and
        // segment length: independent square roots and divisions that the processor can overlap), then the
        // gate's hysteresis and the running sums, in order.
        withUnsafeTemporaryAllocation(of: (reading: GateReading, length: Double).self, capacity: count) { scratch in
            for index in 0..<count {
                let reading = gate.reading(ofStep: index, at: trackStart + index, of: steps, track: track)
                if index == 0 { firstFuture = gate.future }
                let state = base[index].smoothed
                var length = 0.0
                if index > 0 || previous != nil {
                    let from = index > 0 ? (base[index - 1].smoothed[0], base[index - 1].smoothed[2])
                                         : (previous!.east, previous!.north)
                    let east = (state[0] - from.0) * tailScale.east
                    let north = (state[2] - from.1) * tailScale.north
                    length = (east * east + north * north).squareRoot()
                }
                scratch[index] = (reading, length)
            }
            // The running values stay in locals (not in `self` or a point), so the loop's only serial
            // dependencies are the gate's state and the two sums.
            var moving = gate.moving
            var distance = previous?.distance ?? 0, movingTime = previous?.movingTime ?? 0
            var lastTimestamp = previous?.timestamp ?? 0, hasLast = previous != nil
            var counted = false
            let confident = gate.confidentSpeed, allowed = gateAllowed, slow = slowSpeed
            for index in 0..<count {
                let step = base + index
                let (reading, length) = scratch[index]
                moving = reading.reaches(moving ? gate.stillSpeed : gate.movingSpeed)
                counted = reading.reaches(confident) || (allowed && moving) || reading.across >= slow
                let timestamp = step.pointee.timestamp
                // Running into a stop or out of one, the whole window still reaches the confident speed: the
                // metres are the runner's, the time (a half stands still) is not (as `SettlingPoint.closing`).
                if hasLast, counted || reading.across >= confident, !step.pointee.startsSegment {
                    distance += length
                    if counted { movingTime += timestamp - lastTimestamp }
                }
                if let tail {
                    let state = step.pointee.smoothed
                    tail[index] = TrackPoint(east: state[0], north: state[2], timestamp: timestamp,
                                             accuracy: step.pointee.accuracy, moving: counted,
                                             distance: distance, movingTime: movingTime)
                }
                lastTimestamp = timestamp
                hasLast = true
            }
            gate.moving = moving
            let step = base + (count - 1), state = step.pointee.smoothed
            newest = TrackPoint(east: state[0], north: state[2], timestamp: step.pointee.timestamp,
                                accuracy: step.pointee.accuracy, moving: counted, distance: distance,
                                movingTime: movingTime)
        }
    }
}

/// The track as the gate sees it during a walk: the final track, the settling points, then the window's
/// steps. A window step's point has the step's smoothed position and timestamp, which is all the gate reads.
/// Indices are absolute: the final track's stored points start at `committedBase`.
struct WindowTrack {
    let committed: UnsafeBufferPointer<TrackPoint>
    let committedBase: Int
    let settling: UnsafeBufferPointer<SettlingPoint>
    let steps: UnsafePointer<KalmanSmoother.Step>

    /// Time and position of the point at `index` in the track.
    @inline(__always)
    subscript(index: Int) -> (timestamp: Double, east: Double, north: Double) {
        let final = index - committedBase
        if final < committed.count {
            let point = committed[final]
            return (point.timestamp, point.east, point.north)
        }
        let settled = final - committed.count
        if settled < settling.count {
            let point = settling[settled]
            return (point.timestamp, point.east, point.north)
        }
        let step = steps + (settled - settling.count)
        return (step.pointee.timestamp, step.pointee.smoothed[0], step.pointee.smoothed[2])
    }
}

/// One pass of the still/moving gate along the lag window, oldest step first.
///
/// The gate's speed for a step is the smoothed displacement across a window of
/// ``TrackerConfiguration/gateWindow`` seconds centred on it (as far as fixes exist), over its span, and
/// across each half of that window; the gate says moving or still with hysteresis on the slowest of the
/// three. A centred window switches the gate on as the runner sets off, not half a window later, and its
/// length averages out the slow wander of GPS error that a runner standing still would otherwise turn into
/// distance; its halves keep a stop's time from spreading (the whole window spans the running beside a stop
/// for half a window into it, the half on the stop's side does not).
///
/// The window's start is the step's past point in the track (committed then tail), found once per step
/// (``KalmanSmoother/Step/gatePast``); its end is the newest step at most half a window later with no
/// restart in between, found with `future`, a cursor into the smoother's window that only moves forward.
/// Where it lands depends only on timestamps and restarts, which never change for a step, so the end found
/// for an earlier step is a valid start for a later one, in this pass or the next.
struct GatePass {
    /// Half the gate's window, seconds.
    let half: Double
    /// Speeds that stop and start the runner, and from which it is moving whatever the long horizon says, m/s.
    let stillSpeed: Double, movingSpeed: Double, confidentSpeed: Double
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
        confidentSpeed = configuration.confidentSpeed
        self.segmentStart = segmentStart
        self.moving = moving
    }

    /// The gate's hysteresis: moving or still after a step with this reading.
    @inline(__always)
    mutating func judge(_ reading: GateReading) -> Bool {
        moving = reading.reaches(moving ? stillSpeed : movingSpeed)
        return moving
    }

    /// What the gate reads at the step at `index` of the window, which is at `trackIndex` in `track`: the speed
    /// across the whole window and the slower half's (see ``GateReading``).
    @inline(__always)
    mutating func reading(ofStep index: Int, at trackIndex: Int, of steps: UnsafeBufferPointer<KalmanSmoother.Step>,
                        track: WindowTrack) -> GateReading {
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
        guard span > 0 else { return GateReading(across: 0, halvesSquared: 0) }
        let to = end.pointee.smoothed
        let east = to[0] - fromEast, north = to[2] - fromNorth
        // Each half's squared speed (a half without a span is left out): divisions, not square roots.
        var halves = Double.infinity
        let before = timestamp - fromTime, after = end.pointee.timestamp - timestamp
        if before > 0 {
            let east = state[0] - fromEast, north = state[2] - fromNorth
            halves = (east * east + north * north) / (before * before)
        }
        if after > 0 {
            let east = to[0] - state[0], north = to[2] - state[2]
            halves = min(halves, (east * east + north * north) / (after * after))
        }
        return GateReading(across: (east * east + north * north).squareRoot() / span, halvesSquared: halves)
    }
}

/// What the still/moving gate reads at one step: the speed across its whole window, and the squared speed of
/// the slower of its halves (the window before the step and the window after it; a half without fixes is left
/// out). The gate goes by the slowest of the three: near a stop the whole window still spans running on one
/// side for half a window into it, the half on the stop's side does not. The halves' speeds stay squared, so
/// they cost no square roots on the per-fix path.
struct GateReading {
    var across: Double
    var halvesSquared: Double

    /// True when the whole window and each half move at `speed` m/s or faster.
    @inline(__always)
    func reaches(_ speed: Double) -> Bool {
        across >= speed && halvesSquared >= speed * speed
    }
}
