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
    /// The short gate's verdict here (its hysteresis on `gateSpeed`).
    var gateMoving: Bool
    /// Stay intervals (see ``SettlingTrack``) that start here.
    var staysStarting: Int32 = 0
    /// True when the interval ending here was a stay.
    var endsStay = false
    /// True once the horizon centred on this point has been judged (`slow` and `edge` are then final).
    var judged = false
    /// The horizon centred here went somewhere, both halves alike: the runner was moving, if slowly.
    var slow = false
    /// One half of the horizon centred here stayed put while the other went far: the edge of a stop.
    var edge = false
}

/// The long-horizon half of the still/moving decision, on the points that have left the smoothing lag.
///
/// GPS drift under a standing runner wanders around a point: over a minute it stays within a few metres of
/// where it was, while a walker at 0.5 m/s goes 30 m. For every new final point `b`, the interval of
/// ``TrackerConfiguration/settlingHorizon`` seconds ending at `b` is looked at:
/// - its *spread*, the largest distance between five points along it (ends, quarters, middle), within
///   ``TrackerConfiguration/stayRadius`` makes it a *stay*. A point covered by at least
///   ``TrackerConfiguration/stayCover`` stays is still: a standing runner's drift makes almost every interval
///   a stay, while a walk folding back on itself (a hairpin) makes a few, which is not enough;
/// - its halves, from `a` to the middle `m` and from `m` to `b`, judge `m`: when both go somewhere, alike,
///   the runner was moving there (*slow*), if the short gate's local speed is also at least
///   ``TrackerConfiguration/slowConsistency`` of the interval's net speed (a short stop between two stretches
///   of running has none); when one half stays put and the other goes far, `m` is at the *edge* of a stop.
///
/// A point is then moving when the short gate's speed there is ``TrackerConfiguration/confidentSpeed`` or
/// more (drift cannot fake it: this keeps a stop's edges sharp at running pace), or when it is neither in a
/// stay nor at an edge and the short gate or the slow judgement says moving.
///
/// A point's verdict is final once no later interval can cover it; then it leaves for the final track.
/// Until then the points not judged yet carry the newest judgement, so live values at walking pace keep
/// growing and are corrected when the judgement arrives. The per-fix work is a few cursor steps, a dozen
/// distances and one pass over the settling points (bounded by ``TrackerConfiguration/settlingFixes``).
struct SettlingTrack: Sendable {
    /// The decision's parameters (see ``TrackerConfiguration``).
    let horizon: Double, stayDeviations: Double, stayCover: Int32, confidentSpeed: Double, consistency: Double
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
    /// Stays covering the oldest settling point from before it (started earlier, not ended yet).
    private var openStays: Int32 = 0
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
        confidentSpeed = configuration.confidentSpeed
        consistency = configuration.slowConsistency
        capacity = max(configuration.settlingFixes, 1)
        minimumHalf = 2
        halfBalance = 0.35
        edgeDeviations = 2
    }

    /// Number of settling points.
    var count: Int { points.count - head }

    /// Track index one past the newest settling point.
    var endIndex: Int { finalCount + count }

    /// The settling point at track index `index`.
    @inline(__always)
    func point(at index: Int) -> SettlingPoint { points[head + index - finalCount] }

    /// True while the newest intervals have been stays long enough to say the runner is standing now: the
    /// judgement carried to the points no interval covers enough yet.
    var carriedStay: Bool { stayStreak >= stayCover }

    /// Whether the runner counts as moving at the settling point at track index `index`, covered by
    /// `stays` stays so far, with the judgement as it stands.
    @inline(__always)
    func isMoving(_ point: SettlingPoint, at index: Int, stays: Int32) -> Bool {
        if point.gateSpeed >= confidentSpeed { return true }
        let stay = stays >= stayCover || (carriedStay && index >= streakStart + Int(stayCover) - 1)
        if stay { return false }
        guard point.judged else {
            return point.gateMoving || (carriedSlow && point.gateSpeed >= consistency * carriedNetSpeed)
        }
        return !point.edge && (point.gateMoving || point.slow)
    }

    /// Time and position of the point at track index `index`, final or settling.
    @inline(__always)
    private func position(_ index: Int, _ final: [TrackPoint]) -> (Double, Double, Double, accuracy: Double) {
        if index < finalCount {
            let point = final[index]
            return (point.timestamp, point.east, point.north, point.accuracy)
        }
        let point = points[head + index - finalCount]
        return (point.timestamp, point.east, point.north, point.accuracy)
    }

    /// Adds the next final point and judges the interval ending at it; `segmentStart` is the track index
    /// where the current segment began (intervals do not reach across a re-anchor).
    mutating func append(_ newPoint: SettlingPoint, segmentStart: Int, final: [TrackPoint]) {
        points.append(newPoint)
        let newest = endIndex - 1, time = newPoint.timestamp
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
            points[head + startIndex - finalCount].staysStarting += 1
            points[points.count - 1].endsStay = true
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
        while nextToJudge < endIndex, point(at: nextToJudge).timestamp <= judgedCutoff {
            let index = head + nextToJudge - finalCount
            points[index].judged = true
            let slow = carriedSlow && points[index].gateSpeed >= consistency * carriedNetSpeed
            points[index].slow = slow
            points[index].edge = edge
            if slow {
                // A short lapse between two slow judgements is the walk's own noise (a hairpin, a gust of
                // drift against the direction of travel), not a stop: fill it.
                if lastSlow >= finalCount, lastSlow < nextToJudge - 1,
                   points[index].timestamp - point(at: lastSlow).timestamp <= gapFill {
                    for gap in (lastSlow + 1)..<nextToJudge where !points[head + gap - finalCount].edge {
                        points[head + gap - finalCount].slow = true
                    }
                }
                lastSlow = nextToJudge
            }
            nextToJudge += 1
        }
    }

    /// Moves the points whose verdict is final (older than the newest interval's start, or beyond the
    /// capacity) to `final`, measured from its last point.
    mutating func settle(into final: inout [TrackPoint]) {
        var settled = max(start - finalCount, 0)
        settled = max(settled, count - capacity)
        guard settled > 0 else { return }
        nextToJudge = max(nextToJudge, finalCount + settled)
        var previous = final.last, open = openStays
        for offset in 0..<settled {
            let index = head + offset, stays = open + points[index].staysStarting
            let point = measured(points[index], at: finalCount + offset, stays: stays, after: previous)
            open = stays - (points[index].endsStay ? 1 : 0)
            final.append(point)
            previous = point
        }
        openStays = open
        head += settled
        finalCount += settled
        if head >= 256 {
            points.removeFirst(head)
            head = 0
        }
    }

    /// A settling point as a track point measured from `previous`.
    @inline(__always)
    func measured(_ point: SettlingPoint, at index: Int, stays: Int32, after previous: TrackPoint?) -> TrackPoint {
        let moving = isMoving(point, at: index, stays: stays)
        var distance = previous?.distance ?? 0, movingTime = previous?.movingTime ?? 0
        if moving {
            distance += point.length
            movingTime += point.interval
        } else if point.judged, point.edge {
            // At a stop's edge the smoothed track is still closing in on where the runner stopped (or has
            // already set off towards where the runner goes): that way is the runner's, the time is not.
            distance += point.length
        }
        return TrackPoint(east: point.east, north: point.north, timestamp: point.timestamp, accuracy: point.accuracy,
                          moving: moving, distance: distance, movingTime: movingTime)
    }

    /// The newest settling point measured from `previous` (the final track's last point), and the newest
    /// one at or before `cutoff` (nil when none is).
    func newest(after previous: TrackPoint?, atOrBefore cutoff: Double) -> (newest: TrackPoint?, reference: TrackPoint?) {
        var last = previous, reference: TrackPoint?, open = openStays
        for index in head..<points.count {
            let stays = open + points[index].staysStarting
            open = stays - (points[index].endsStay ? 1 : 0)
            let point = measured(points[index], at: finalCount + index - head, stays: stays, after: last)
            if point.timestamp <= cutoff { reference = point }
            last = point
        }
        return (last, reference)
    }

    /// The settling points measured from `previous`, oldest first.
    func trackPoints(after previous: TrackPoint?) -> [TrackPoint] {
        var result: [TrackPoint] = []
        result.reserveCapacity(count)
        var last = previous, open = openStays
        for index in head..<points.count {
            let stays = open + points[index].staysStarting
            open = stays - (points[index].endsStay ? 1 : 0)
            let point = measured(points[index], at: finalCount + index - head, stays: stays, after: last)
            result.append(point)
            last = point
        }
        return result
    }
}
