/// A point that has left the smoothing lag (its position is final) but whose still/moving verdict may still
/// change: the long-horizon decision needs up to ``TrackerConfiguration/settlingHorizon`` seconds after it.
struct SettlingPoint: Sendable, Hashable {
    /// Final smoothed position in the run's local frame, metres.
    var east: Double, north: Double
    /// Unix time of the fix.
    var timestamp: Double
    /// The fix's reported accuracy, metres.
    var accuracy: Double
    /// Geodesic length from the previous point of the track, metres (0 at the start of a segment).
    var length: Double
    /// Seconds since the previous point of the track (0 at the start of a segment).
    var interval: Double
    /// The short gate's speed here: the smoothed displacement across ``TrackerConfiguration/gateWindow``, m/s.
    var gateSpeed: Double
    /// The gate's window and both its halves here (before and after the point) reach
    /// ``TrackerConfiguration/confidentSpeed`` (see ``GateReading``).
    var confident: Bool
    /// The gate's whole window reaches ``TrackerConfiguration/confidentSpeed`` here (a half may not: the
    /// runner is running into a stop or out of one). When the point is not moving its length still counts,
    /// its time does not.
    var closing: Bool
    /// The short gate's verdict here (its hysteresis on the slowest of the window and its halves).
    var gateMoving: Bool
    /// Stay intervals (see ``SettlingTrack``) covering this point so far.
    var stays: Int32 = 0
    /// Until judged: the gate speed from which the runner counts as moving slowly here, carried from the
    /// newest judgement when the point settled (infinite when that was not slow movement).
    var carriedSlowSpeed = Double.infinity
    /// True once the horizon centred on this point has been judged (`slow` and `edge` are then final).
    var judged = false
    /// The horizon centred here went somewhere, both halves alike: the runner was moving, if slowly.
    var slow = false
    /// One half of the horizon centred here stayed put while the other went far: the edge of a stop.
    var edge = false
    /// Distance and moving time from the start to here with the verdicts as they stand (valid before the
    /// settling track's `dirtyFrom`).
    var distance = 0.0, movingTime = 0.0
}

/// The long-horizon half of the still/moving decision, on the points that have left the smoothing lag.
///
/// GPS drift under a standing runner wanders around a point: over a minute it stays within a few metres of
/// where it was, while a walker at 0.5 m/s goes 30 m. For every new final point `b`, the interval of
/// ``TrackerConfiguration/settlingHorizon`` seconds ending at `b` is looked at:
/// - its *spread*, the largest distance between five points along it (ends, quarters, middle), within
///   ``TrackerConfiguration/stayDeviations`` deviations of the reported error makes it a *stay*. A point
///   covered by at least ``TrackerConfiguration/stayCover`` stays is still: a standing runner's drift makes
///   almost every interval a stay, while a walk folding back on itself (a hairpin) makes a few, not enough;
/// - its halves, from `a` to the middle `m` and from `m` to `b`, judge `m`: when both go somewhere, alike,
///   the runner was moving there (*slow*), if the short gate's local speed is also at least
///   ``TrackerConfiguration/slowConsistency`` of the interval's net speed (a short stop between two stretches
///   of running has none); when one half stays put and the other goes far, `m` is at the *edge* of a stop.
///
/// A point is then moving when the smoothed track moves at ``TrackerConfiguration/confidentSpeed`` or more
/// over the short gate's window there and over both its halves, before and after it (drift cannot fake it;
/// and as the half on a stop's side stands still, a stop's time starts within a few seconds of the stop), or
/// when it is neither in a stay nor at an edge and the short gate or the slow judgement says moving. A point
/// not moving adds its length (not its time) at the edge of a stop, or where the whole window reaches the
/// confident speed though a half does not (running into or out of a stop).
///
/// A point's verdict is final once no later interval can cover it; then it leaves for the final track.
/// Until then the points not judged yet carry the judgement made when they settled, so live values at
/// walking pace keep growing and are corrected when their own judgement arrives. Each point keeps its
/// running sums; a fix recomputes them only from the oldest point whose verdict changed (usually just the
/// newest), so the per-fix work is a few cursor steps, a dozen distances and a few points' sums, and at
/// most one pass over the settling points (bounded by ``TrackerConfiguration/settlingFixes``).
struct SettlingTrack: Sendable {
    /// The decision's parameters (see ``TrackerConfiguration``).
    let horizon: Double, stayDeviations: Double, stayCover: Int32, consistency: Double
    let capacity: Int
    /// Reported accuracy / per-axis standard deviation of the error.
    let accuracyRatio: Double
    /// Each half of an interval must cover at least this many error deviations, and at least
    /// `halfBalance` of the other half, for its middle to count as slow movement.
    let minimumHalf: Double, halfBalance: Double
    /// An interval's middle is at the edge of a stop when one half is within this many error deviations
    /// and the other beyond three times that.
    let edgeDeviations: Double

    /// The settling points, oldest first, from `head` on (older ones are dropped in batches).
    private(set) var points: [SettlingPoint] = []
    private(set) var head = 0
    /// Track index of the oldest settling point (the length of the final track).
    private(set) var finalCount = 0
    /// Track indices of the five points of the newest interval (start, quarter, middle, three quarters).
    private var start = 0, quarter = 0, middle = 0, threeQuarters = 0
    /// Track index of the oldest point not judged yet.
    private var nextToJudge = 0
    /// Track index of the newest point judged slow (−1 when none).
    private var lastSlow = -1
    /// Lapses in slow movement up to this many seconds are filled.
    let gapFill = 15.0
    /// Track index of the current pace's reference point, a cursor that only moves forward.
    private var paceIndex = 0
    /// Track index of the oldest settling point whose running sums are out of date (`endIndex` when none).
    private var dirtyFrom = 0
    /// The final track's sums at its end, where the settling points' sums start.
    private var finalDistance = 0.0, finalMovingTime = 0.0
    /// Consecutive stays among the newest intervals, and the track index where the first of them started.
    private var stayStreak: Int32 = 0, streakStart = 0
    /// Whether the newest interval moved (slowly or not), and its net speed: the judgement carried to the
    /// points it has not reached yet.
    private(set) var carriedSlow = false, carriedNetSpeed = 0.0

    init(_ configuration: TrackerConfiguration) {
        horizon = configuration.settlingHorizon
        stayDeviations = configuration.stayDeviations
        accuracyRatio = configuration.accuracyRatio
        stayCover = Int32(clamping: max(configuration.stayCover, 1))
        consistency = configuration.slowConsistency
        capacity = max(configuration.settlingFixes, 1)
        minimumHalf = 2
        halfBalance = 0.35
        edgeDeviations = 2
    }

    /// Number of settling points.
    var count: Int { points.count - head }

    /// Points held in storage (the settling ones, and final ones not yet dropped from it).
    var storedCount: Int { points.count }

    /// Track index of the oldest point the newest interval's ends reach (final points before it are not read
    /// again: the ends only move forward).
    var oldestIndexInUse: Int { min(min(start, quarter), min(middle, threeQuarters)) }

    /// Track index one past the newest settling point.
    var endIndex: Int { finalCount + count }

    /// The settling point at track index `index`.
    @inline(__always)
    func point(at index: Int) -> SettlingPoint { points[head + index - finalCount] }

    /// True while the newest intervals have been stays long enough to say the runner is standing now: the
    /// judgement carried to the points no interval covers enough yet.
    var carriedStay: Bool { stayStreak >= stayCover }

    /// Track index from which the points not covered by enough stays yet are still because the runner is
    /// standing now (never when the newest intervals are not a long enough run of stays).
    private var carriedStayFrom: Int { carriedStay ? streakStart + Int(stayCover) - 1 : Int.max }

    /// Whether the runner counts as moving at the settling point at track index `index`, with the judgement
    /// as it stands.
    @inline(__always)
    func isMoving(_ point: SettlingPoint, at index: Int) -> Bool {
        isMoving(point, at: index, carriedStayFrom: carriedStayFrom)
    }

    @inline(__always)
    private func isMoving(_ point: SettlingPoint, at index: Int, carriedStayFrom: Int) -> Bool {
        Self.isMoving(point, at: index, carriedStayFrom: carriedStayFrom, stayCover: stayCover)
    }

    /// What the point adds to the sums: 2 when moving (length and time), 1 at a stop's edge or closing in on
    /// one (length only, see ``refresh()``), 0 otherwise. A change of it is what makes the sums after the point out of date.
    @inline(__always)
    private func counting(_ point: SettlingPoint, at index: Int, carriedStayFrom: Int) -> Int {
        isMoving(point, at: index, carriedStayFrom: carriedStayFrom) ? 2
            : point.judged && point.edge || point.closing ? 1 : 0
    }

    /// The verdict from the values it is made of (static, so a pass writing the points can call it).
    @inline(__always)
    private static func isMoving(_ point: SettlingPoint, at index: Int, carriedStayFrom: Int, stayCover: Int32) -> Bool {
        if point.confident { return true }
        if point.stays >= stayCover || index >= carriedStayFrom { return false }
        guard point.judged else { return point.gateMoving || point.gateSpeed >= point.carriedSlowSpeed }
        return !point.edge && (point.gateMoving || point.slow)
    }

    /// Time and position of the point at track index `index`, final or settling.
    @inline(__always)
    private func position(_ index: Int, _ final: FinalTrack) -> (Double, Double, Double, accuracy: Double) {
        if index < finalCount {
            let point = final[index]
            return (point.timestamp, point.east, point.north, point.accuracy)
        }
        let point = points[head + index - finalCount]
        return (point.timestamp, point.east, point.north, point.accuracy)
    }

    /// Adds the next final point and judges the interval ending at it; `segmentStart` is the track index
    /// where the current segment began (intervals do not reach across a re-anchor).
    mutating func append(_ newPoint: SettlingPoint, segmentStart: Int, final: FinalTrack) {
        points.append(newPoint)
        let newest = endIndex - 1, time = newPoint.timestamp
        dirtyFrom = min(dirtyFrom, newest)
        let wasCarriedStayFrom = carriedStayFrom
        defer {
            // The new point carries the newest judgement until its own arrives; a change in the carried stay
            // changes the verdicts from where it applies.
            points[points.count - 1].carriedSlowSpeed = carriedSlow ? consistency * carriedNetSpeed : .infinity
            let carriedFrom = carriedStayFrom
            if carriedFrom != wasCarriedStayFrom {
                dirtyFrom = max(min(dirtyFrom, min(carriedFrom, wasCarriedStayFrom)), finalCount)
            }
        }
        func advanced(_ cursor: Int, to cutoff: Double) -> Int {
            var cursor = max(cursor, segmentStart)
            while cursor + 1 < newest, position(cursor + 1, final).0 <= cutoff { cursor += 1 }
            return cursor
        }
        start = advanced(start, to: time - horizon)
        let first = position(start, final)
        let span = time - first.0
        guard start < newest, span >= horizon else {
            stayStreak = 0
            return
        }
        quarter = advanced(quarter, to: time - 0.75 * horizon)
        middle = advanced(middle, to: time - 0.5 * horizon)
        threeQuarters = advanced(threeQuarters, to: time - 0.25 * horizon)
        let q = position(quarter, final), m = position(middle, final), t = position(threeQuarters, final)
        @inline(__always) func squared(_ a: (Double, Double, Double, accuracy: Double),
                                       _ b: (Double, Double, Double, accuracy: Double)) -> Double {
            let east = b.1 - a.1, north = b.2 - a.2
            return east * east + north * north
        }
        let b = (time, newPoint.east, newPoint.north, accuracy: newPoint.accuracy)
        // Drift scales with the error the phone reports: the interval's radii are in deviations of it
        // (floored, so a phone claiming centimetres still has some).
        let deviation = max((first.accuracy + q.accuracy + m.accuracy + t.accuracy + b.accuracy) / (5 * accuracyRatio), 1)
        let stayRadius = stayDeviations * deviation
        let minimumHalf = self.minimumHalf * deviation, edgeRadius = edgeDeviations * deviation
        var spread = max(max(squared(first, q), squared(first, m)), max(squared(first, t), squared(first, b)))
        spread = max(spread, max(max(squared(q, m), squared(q, t)), squared(q, b)))
        spread = max(spread, max(max(squared(m, t), squared(m, b)), squared(t, b)))
        carriedNetSpeed = squared(first, b).squareRoot() / span
        let stay = spread <= stayRadius * stayRadius
        if stay {
            // A stay starting before the settling points (they were decided early, beyond the capacity)
            // covers only what is left.
            let startIndex = max(start, finalCount)
            for index in startIndex...newest {
                let storage = head + index - finalCount
                points[storage].stays += 1
                // Only a point reaching the cover changes its verdict.
                if points[storage].stays == stayCover { dirtyFrom = min(dirtyFrom, index) }
            }
            if stayStreak == 0 { streakStart = startIndex }
            stayStreak += 1
        } else {
            stayStreak = 0
        }
        // Both halves must go somewhere, alike: next to a stop, one half is drift and the other running.
        let back = squared(first, m).squareRoot(), ahead = squared(m, b).squareRoot()
        let shorter = min(back, ahead), longer = max(back, ahead)
        carriedSlow = !stay && shorter >= max(minimumHalf, halfBalance * longer)
        let edge = shorter <= edgeRadius && longer >= 3 * edgeRadius

        // Judge the points the interval is centred on (all those before its middle not judged yet).
        let judgedCutoff = time - 0.5 * horizon
        let carriedFrom = carriedStayFrom
        while nextToJudge < endIndex, point(at: nextToJudge).timestamp <= judgedCutoff {
            let index = head + nextToJudge - finalCount
            let before = counting(points[index], at: nextToJudge, carriedStayFrom: carriedFrom)
            points[index].judged = true
            let slow = carriedSlow && points[index].gateSpeed >= consistency * carriedNetSpeed
            points[index].slow = slow
            points[index].edge = edge
            if counting(points[index], at: nextToJudge, carriedStayFrom: carriedFrom) != before {
                dirtyFrom = min(dirtyFrom, nextToJudge)
            }
            if slow {
                // A short lapse between two slow judgements is the walk's own noise (a hairpin, a gust of
                // drift against the direction of travel), not a stop: fill it.
                if lastSlow >= finalCount, lastSlow < nextToJudge - 1,
                   points[index].timestamp - point(at: lastSlow).timestamp <= gapFill {
                    for gap in (lastSlow + 1)..<nextToJudge where !points[head + gap - finalCount].edge {
                        let storage = head + gap - finalCount
                        let before = counting(points[storage], at: gap, carriedStayFrom: carriedFrom)
                        points[storage].slow = true
                        if counting(points[storage], at: gap, carriedStayFrom: carriedFrom) != before {
                            dirtyFrom = min(dirtyFrom, gap)
                        }
                    }
                }
                lastSlow = nextToJudge
            }
            nextToJudge += 1
        }
    }

    /// Brings the running sums up to date, from the oldest point whose verdict changed.
    ///
    /// The sums add the same terms in the same order whichever point they restart from, so they are the
    /// same to the last bit as a pass from the first settling point would make.
    mutating func refresh() {
        guard dirtyFrom < endIndex else { return }
        let from = max(dirtyFrom, finalCount), carriedFrom = carriedStayFrom, finalCount = finalCount
        let count = points.count - head, head = head, stayCover = stayCover
        var distance = finalDistance, movingTime = finalMovingTime
        if from > finalCount {
            let previous = points[head + from - 1 - finalCount]
            (distance, movingTime) = (previous.distance, previous.movingTime)
        }
        points.withUnsafeMutableBufferPointer { all in
            let base = all.baseAddress! + head
            for offset in (from - finalCount)..<count {
                let point = base + offset
                let moving = Self.isMoving(point.pointee, at: finalCount + offset, carriedStayFrom: carriedFrom,
                                           stayCover: stayCover)
                // At a stop's edge the smoothed track is still closing in on where the runner stopped (or has
                // already set off towards where the runner goes): that way is the runner's, the time is not.
                let edgeLength = !moving && (point.pointee.judged && point.pointee.edge || point.pointee.closing)
                distance += moving || edgeLength ? point.pointee.length : 0
                movingTime += moving ? point.pointee.interval : 0
                point.pointee.distance = distance
                point.pointee.movingTime = movingTime
            }
        }
        dirtyFrom = endIndex
    }

    /// Moves the points whose verdict is final (older than the newest interval's start, or beyond the
    /// capacity) to `final`.
    mutating func settle(into final: inout FinalTrack) {
        var settled = max(start - finalCount, 0)
        settled = max(settled, count - capacity)
        guard settled > 0 else { return }
        refresh()
        nextToJudge = max(nextToJudge, finalCount + settled)
        for offset in 0..<settled { final.append(trackPoint(atStorage: head + offset)) }
        finalDistance = points[head + settled - 1].distance
        finalMovingTime = points[head + settled - 1].movingTime
        head += settled
        finalCount += settled
        dirtyFrom = max(dirtyFrom, finalCount)
        // Batches of at least the settling points' number, so each is copied at most once on average, and at
        // least 16: a live run at 1 Hz has a few dozen settling points, and 64 dropped ones kept beside them
        // were most of its storage (thousands of live runs: tens of megabytes).
        if head >= max(16, points.count - head) {
            points.removeFirst(head)
            head = 0
        }
    }

    /// The settling point in `points[storage]` as a track point, with its sums as they stand.
    @inline(__always)
    private func trackPoint(atStorage storage: Int) -> TrackPoint {
        let point = points[storage]
        return TrackPoint(east: point.east, north: point.north, timestamp: point.timestamp, accuracy: point.accuracy,
                          moving: isMoving(point, at: finalCount + storage - head), distance: point.distance,
                          movingTime: point.movingTime)
    }

    /// The newest settling point, and the newest one at or before `cutoff` (nil when none is), with the
    /// sums brought up to date. The cutoff only moves forward (it follows the newest fix).
    mutating func measureNewest(atOrBefore cutoff: Double) -> (newest: TrackPoint?, reference: TrackPoint?) {
        guard count > 0 else { return (nil, nil) }
        refresh()
        paceIndex = max(paceIndex, finalCount)
        while paceIndex + 1 < endIndex, point(at: paceIndex + 1).timestamp <= cutoff { paceIndex += 1 }
        let newest = trackPoint(atStorage: points.count - 1)
        guard point(at: paceIndex).timestamp <= cutoff else { return (newest, nil) }
        return (newest, trackPoint(atStorage: head + paceIndex - finalCount))
    }

    /// The settling points as track points, oldest first.
    func trackPoints() -> [TrackPoint] {
        var settled = self
        settled.refresh()
        return (settled.head..<settled.points.count).map { settled.trackPoint(atStorage: $0) }
    }
}
