/// Where the runner last set off or sped up sharply, seen on the points that leave the smoothing lag: the
/// current pace's window starts no earlier (see ``RunTracker`` and ``TrackerConfiguration/currentPaceMinimum``).
///
/// Why: the still/moving verdict cannot be the only guard. A short stop under a few metres of noise can be
/// judged moving as a whole (the smoothed track drifts across it at half a metre a second), and the smoother
/// spreads a restart over some seconds either side of it, so a window reaching back into a stop or its
/// ramp counts seconds of standing as seconds of running: 430–480 s/km for a runner back at 333 s/km
/// 15 s after a 20 s stop under 3 m of noise. Positions, unlike verdicts, are final once they leave the lag,
/// so each such point is judged once: it is an edge when the track came to it at less than
/// ``slowShare`` of the speed it went on at (over the ``lookBack`` before it and the lag after it).
struct SettingOffEdge: Sendable {
    /// Seconds before a point over which its speed in is measured for the ramp.
    static let lookBack = 5.0
    /// Seconds before a point over which its speed in is measured for setting off from standing.
    static let standingLookBack = 10.0
    /// The speed out must span at least this many seconds (the newest fix may be only just past the point).
    static let lookAhead = 3.0
    /// A point is an edge when its speed in is below this share of its speed out. 0.7: on a steady run the
    /// two differ by a tenth or two under a few metres of noise; the ramp out of a stop starts near zero.
    static let slowShare = 0.7
    /// A point is where the runner set off when its speed in is below this share of its speed out: standing,
    /// or as good as (steady running under noise never comes near it).
    static let standingShare = 0.5
    /// Seconds after setting off over which the ramp may still be climbing: the newest point within them
    /// whose speed in is below ``slowShare`` of its speed out is the edge.
    static let rampSpan = 15.0
    /// A speed out slower than this (m/s) makes no edge: drift while standing, not setting off.
    static let slowestOut = 1.0

    /// A settled position.
    struct Position: Sendable {
        var timestamp: Double, east: Double, north: Double
    }

    /// The newest settled positions, oldest first, from `head`: a few seconds' worth, enough to reach
    /// ``lookBack`` behind the newest at any fix rate up to ``capacity`` per ``lookBack``.
    private var recent: [Position] = []
    private var head = 0
    /// The most positions kept.
    static let capacity = 32
    /// Timestamp of the newest edge (−∞ when none).
    private(set) var newest = -Double.infinity
    /// Timestamp of the newest point where the runner set off from standing (−∞ when none).
    private var settingOff = -Double.infinity

    /// Forgets the positions before a break in the track (a new segment): a speed is not measured across it.
    mutating func restart() {
        recent.removeAll(keepingCapacity: true)
        head = 0
    }

    /// Judges a point that has just left the lag, `newestFix` being the newest position of the track.
    mutating func observe(_ point: Position, newestFix: Position) {
        let ahead = newestFix.timestamp - point.timestamp
        if ahead >= Self.lookAhead {
            let speedOut = Self.distance(point, newestFix) / ahead
            if speedOut >= Self.slowestOut {
                if let speedIn = speed(into: point, over: Self.standingLookBack), speedIn < Self.standingShare * speedOut {
                    newest = point.timestamp
                    settingOff = point.timestamp
                } else if point.timestamp - settingOff <= Self.rampSpan,
                          let speedIn = speed(into: point, over: Self.lookBack), speedIn < Self.slowShare * speedOut {
                    newest = point.timestamp
                }
            }
        }
        // Positions older than the longest look-back from this point are never read again.
        while head + 1 < recent.count, recent[head + 1].timestamp <= point.timestamp - Self.standingLookBack { head += 1 }
        recent.append(point)
        if recent.count - head > Self.capacity { head = recent.count - Self.capacity }
        if head >= Self.capacity {
            recent.removeFirst(head)
            head = 0
        }
    }

    /// The straight-line speed from the newest recent position at least `lookBack` older than `point`, nil
    /// when there is none.
    private func speed(into point: Position, over lookBack: Double) -> Double? {
        var index = recent.count - 1
        while index >= head, recent[index].timestamp > point.timestamp - lookBack { index -= 1 }
        guard index >= head else { return nil }
        return Self.distance(recent[index], point) / (point.timestamp - recent[index].timestamp)
    }

    @inline(__always)
    private static func distance(_ a: Position, _ b: Position) -> Double {
        let east = b.east - a.east, north = b.north - a.north
        return (east * east + north * north).squareRoot()
    }
}
