/// The committed track followed by the provisional tail, seen as one track.
struct LiveTrack: CumulativeTrack {
    let committed: FinalTrack
    let tail: [TrackPoint]

    var startIndex: Int { committed.startIndex }

    var pointCount: Int { committed.count + tail.count }

    func point(at index: Int) -> TrackPoint {
        index < committed.count ? committed[index] : tail[index - committed.count]
    }

    /// The newest point.
    var last: TrackPoint? { tail.last ?? committed.last }

    /// Distance so far, metres.
    var distance: Double { last?.distance ?? 0 }
}

extension RunTracker {
    /// The committed track and the tail as one track. Built only where a search needs it: the tail is
    /// rebuilt for it.
    var liveTrack: LiveTrack {
        LiveTrack(committed: committed, tail: settling.trackPoints() + tailPoints)
    }

    /// The coordinate of a crossing.
    func coordinate(of crossing: Crossing) -> Coordinate {
        projection?.coordinate(east: crossing.east, north: crossing.north) ?? Coordinate(latitude: 0, longitude: 0)
    }

    /// Awards a badge reached at `crossing`, updating the history.
    mutating func award(_ badge: Badge, crossing: Crossing) -> [BadgeAward] {
        let elapsed = crossing.timestamp - startTimestamp
        let speed = elapsed > 0 ? badge.distance / elapsed : 0
        return history.recordCheckpoint(badge, speed: speed, at: crossing.timestamp).map { tier in
            BadgeAward(badge: badge, tier: tier, elapsed: elapsed, speed: speed,
                       coordinate: coordinate(of: crossing), timestamp: crossing.timestamp)
        }
    }

    /// Brings the live measurements that need cursors up to the newest point: the current pace (remembered
    /// for ``snapshot``) and the next badge.
    @inline(__always)
    mutating func measureLive(at last: TrackPoint) {
        latestCurrentPace = currentPace(last)
        let badges = Badges.all
        while nextBadgeCursor < badges.count, badges[nextBadgeCursor].distance <= last.distance { nextBadgeCursor += 1 }
        while nextBadgeCursor > 0, badges[nextBadgeCursor - 1].distance > last.distance { nextBadgeCursor -= 1 }
    }

    /// The snapshot at the newest point of the track.
    func snapshot(at last: TrackPoint, currentPace: Double?) -> RunSnapshot {
        Self.snapshot(at: last, currentPace: currentPace, start: startTimestamp, projection: projection,
                      nextBadge: nextBadgeCursor)
    }

    /// The snapshot from the values it is made of. A static function, so that making it does not copy the
    /// tracker (a method on a tracker being mutated makes the compiler copy all of it, some 700 bytes).
    @inline(__always)
    static func snapshot(at last: TrackPoint, currentPace: Double?, start: Double, projection: LocalProjection?,
                                 nextBadge index: Int) -> RunSnapshot {
        let badges = Badges.all, hasNext = index < badges.count
        let coordinate = projection?.coordinate(east: last.east, north: last.north) ?? Coordinate(latitude: 0, longitude: 0)
        // The badge goes straight into the snapshot (an intermediate optional would be copied, with its
        // strings' reference counts, and destroyed again).
        return RunSnapshot(distance: last.distance, elapsed: last.timestamp - start, movingTime: last.movingTime,
                           averagePace: pace(last.movingTime, last.distance), currentPace: currentPace,
                           coordinate: coordinate, timestamp: last.timestamp, nextBadge: hasNext ? badges[index] : nil,
                           distanceToNextBadge: hasNext ? badges[index].distance - last.distance : 0)
    }

    /// Pace over the last ``TrackerConfiguration/currentPaceWindow`` seconds; nil when the runner is standing
    /// still, the run is younger than the window, or less than ``TrackerConfiguration/currentPaceMinimum``
    /// seconds of moving time follow the window's newest stop.
    ///
    /// Why the window starts after a stop inside it: beside a stop the track counts metres whose time it does
    /// not (the smoothed track closing in on the stop or setting off from it, a stop's edge), so across a stop
    /// the metres outran the moving time: 205 s/km for a runner at 333 s/km just after a minute's stop. After
    /// the newest point whose time was not counted, every point counts both, so the pace there is the distance
    /// over the time spent covering it. It waits for ``TrackerConfiguration/currentPaceMinimum`` of it: in the
    /// first seconds after setting off the live track is still catching up with the runner (or lagging).
    private mutating func currentPace(_ last: TrackPoint) -> Double? {
        let cutoff = last.timestamp - configuration.currentPaceWindow
        // The reference point only moves forward, so a cursor into the committed track finds it in a step or two.
        // It moves while the runner stands too (the cutoffs only grow, so it lands where a later move would), so
        // a tracker that forgets its track need not keep a long stop's points for it.
        while paceCursor + 1 < committed.count, committed[paceCursor + 1].timestamp <= cutoff { paceCursor += 1 }
        guard last.moving else { return nil }
        var reference: TrackPoint
        // The tail's first point is the lag window's first step.
        if smoother.count > 0 && smoother.timestamp(at: 0) <= cutoff {
            // A window longer than the pace window (sparse fixes): search the tail. The settling points all come
            // before the tail, so they matter only when no tail point is old enough (and are built only then).
            let tail = LiveTrack(committed: FinalTrack(), tail: tailPoints)
            if let index = tail.lastIndex(atOrBefore: cutoff) {
                reference = tail.point(at: index)
            } else {
                let track = liveTrack
                guard let index = track.lastIndex(atOrBefore: cutoff) else { return nil }
                reference = track.point(at: index)
            }
        } else if let settled = settledPaceReference {
            // Found by the settling track's pass on this fix.
            reference = settled
        } else if paceCursor < committed.count, committed[paceCursor].timestamp <= cutoff {
            reference = committed[paceCursor]
        } else {
            return nil  // younger than the window
        }
        // The runner set off inside the window: its pace there is the smoother's ramp, not the runner's, and
        // the seconds before it may be a stop judged moving (see ``SettingOffEdge``). Not shown until the
        // whole window is after it.
        if settingOff.newest > reference.timestamp { return nil }
        // Time not counted in the window (a stop, a stop's edge, a re-anchor): rare, so the search for where it
        // ends is off the per-fix path (while running, every interval counts and the two spans are equal).
        if (last.timestamp - reference.timestamp) - (last.movingTime - reference.movingTime) > Self.timeSlack {
            reference = newestUncounted(after: reference, before: last)
        }
        let moving = last.movingTime - reference.movingTime
        // Never more than the window holds, or a short window would never show a pace.
        guard moving >= min(configuration.currentPaceMinimum, configuration.currentPaceWindow) else { return nil }
        return Self.pace(moving, last.distance - reference.distance)
    }

    /// Seconds of difference between a span's time and its moving time taken for rounding, not a stop.
    static let timeSlack = 1e-3

    /// The newest point of the live track from `reference` to `last` after which all time is counted as
    /// moving: the first whose span to `last` has no time uncounted (a binary search: the uncounted time to
    /// `last` only shrinks along the track).
    private func newestUncounted(after reference: TrackPoint, before last: TrackPoint) -> TrackPoint {
        let track = liveTrack
        guard let from = track.lastIndex(atOrBefore: reference.timestamp) else { return last }
        var low = max(from, track.startIndex), high = track.pointCount - 1
        @inline(__always) func uncounted(_ point: TrackPoint) -> Double {
            (last.timestamp - point.timestamp) - (last.movingTime - point.movingTime)
        }
        while low < high {
            let mid = (low + high) / 2
            if uncounted(track.point(at: mid)) > Self.timeSlack { low = mid + 1 } else { high = mid }
        }
        return track.point(at: low)
    }

    /// Pace between consecutive badges reached on the track, from Earth at the start.
    func checkpoints(on track: LiveTrack) -> [CheckpointSplit] {
        guard var from = Badges.all.first, let end = track.last else { return [] }
        var fromElapsed = 0.0
        var result: [CheckpointSplit] = []
        for badge in Badges.all.dropFirst() where end.distance >= badge.distance {
            guard let crossing = track.crossing(of: badge.distance) else { break }
            let elapsed = crossing.timestamp - startTimestamp
            let duration = elapsed - fromElapsed
            result.append(CheckpointSplit(from: from, to: badge, duration: duration,
                                          pace: duration / (badge.distance - from.distance) * 1000))
            from = badge
            fromElapsed = elapsed
        }
        return result
    }
}
