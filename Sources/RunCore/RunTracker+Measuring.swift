/// The committed track followed by the provisional tail, seen as one track.
struct LiveTrack: CumulativeTrack {
    let committed: [TrackPoint]
    let tail: [TrackPoint]

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
    /// Moves the oldest `count` smoothed steps out of the lag window into the final track, measuring each
    /// segment geodesically.
    mutating func commitSteps(_ count: Int) {
        guard count > 0, let projection else { return }
        var future = 0, past = committedGatePast
        for index in 0..<count {
            let step = smoother.window[index]
            let gate = gateSpeed(of: step, windowIndex: index, future: &future, past: &past,
                                 built: committed, tail: [])
            let point = trackPoint(for: step, gateSpeed: gate, after: committed.last, moving: &committedMoving,
                                   projection: projection) { Geodesy.distance(from: $0, to: $1) }
            committed.append(point)
        }
        committedGatePast = past
        smoother.dropOldest(count)
    }

    /// Rebuilds the provisional points of the lag window from the latest smoothing.
    mutating func rebuildTail() {
        tail.removeAll(keepingCapacity: true)
        guard let projection, let newest = smoother.window.last else { return }
        // One local scale for the whole window: it spans only seconds of running.
        let scale = LocalScale(latitude: projection.coordinate(east: newest.smoothed[0], north: newest.smoothed[2]).latitude)
        var moving = committedMoving
        var past = committedGatePast, future = 0
        for index in smoother.window.indices {
            let step = smoother.window[index]
            let gate = gateSpeed(of: step, windowIndex: index, future: &future, past: &past,
                                 built: committed, tail: tail)
            let point = trackPoint(for: step, gateSpeed: gate, after: tail.last ?? committed.last, moving: &moving,
                                   projection: projection) { a, b in
                let east = Geodesy.normalisedDegrees(b.longitude - a.longitude) * scale.metresPerDegreeEast
                let north = (b.latitude - a.latitude) * scale.metresPerDegreeNorth
                return (east * east + north * north).squareRoot()
            }
            tail.append(point)
        }
    }

    /// The gate's speed for a step: the smoothed displacement across a window of
    /// ``TrackerConfiguration/gateWindow`` seconds centred on it (as far as fixes exist), over its span.
    /// A centred window switches the gate on as the runner sets off, not half a window later, and its
    /// length averages out the slow wander of GPS error that a runner standing still would otherwise
    /// turn into distance.
    ///
    /// `past` is a cursor into the built track (committed then tail) that only moves forward, and
    /// `future` a cursor into the smoother's window, so each fix costs a few steps, not a search.
    private func gateSpeed(of step: KalmanSmoother.Step, windowIndex: Int, future: inout Int, past: inout Int,
                           built committed: [TrackPoint], tail: [TrackPoint]) -> Double {
        let half = configuration.gateWindow / 2
        let window = smoother.window
        future = max(future, windowIndex)
        while future + 1 < window.count, window[future + 1].timestamp <= step.timestamp + half,
              !window[future + 1].startsSegment { future += 1 }
        let builtCount = committed.count + tail.count
        func builtPoint(_ i: Int) -> TrackPoint { i < committed.count ? committed[i] : tail[i - committed.count] }
        while past + 1 < builtCount, builtPoint(past + 1).timestamp <= step.timestamp - half { past += 1 }
        var fromTime = step.timestamp, fromEast = step.smoothed[0], fromNorth = step.smoothed[2]
        if !step.startsSegment, past < builtCount, past >= gateSegmentStart {
            let p = builtPoint(past)
            if p.timestamp < step.timestamp { (fromTime, fromEast, fromNorth) = (p.timestamp, p.east, p.north) }
        }
        let to = window[future]
        let span = to.timestamp - fromTime
        guard span > 0 else { return 0 }
        let east = to.smoothed[0] - fromEast, north = to.smoothed[2] - fromNorth
        return (east * east + north * north).squareRoot() / span
    }

    /// A smoothed step as a track point: the gate decides whether its segment counts.
    private func trackPoint(for step: KalmanSmoother.Step, gateSpeed: Double, after previous: TrackPoint?,
                            moving: inout Bool, projection: LocalProjection,
                            measure: (Coordinate, Coordinate) -> Double) -> TrackPoint {
        let state = step.smoothed
        let coordinate = projection.coordinate(east: state[0], north: state[2])
        moving = moving ? gateSpeed >= configuration.stillSpeed : gateSpeed >= configuration.movingSpeed
        var point = TrackPoint(coordinate: coordinate, east: state[0], north: state[2], timestamp: step.timestamp,
                               accuracy: step.accuracy, moving: moving, distance: previous?.distance ?? 0,
                               movingTime: previous?.movingTime ?? 0)
        if let previous, moving, !step.startsSegment {
            point.distance += measure(previous.coordinate, coordinate)
            point.movingTime += step.timestamp - previous.timestamp
        }
        return point
    }

    /// Awards a badge reached at `crossing`, updating the history.
    mutating func award(_ badge: Badge, crossing: Crossing) -> [BadgeAward] {
        let elapsed = crossing.timestamp - startTimestamp
        let speed = elapsed > 0 ? badge.distance / elapsed : 0
        return history.recordCheckpoint(badge, speed: speed, at: crossing.timestamp).map { tier in
            BadgeAward(badge: badge, tier: tier, elapsed: elapsed, speed: speed, coordinate: crossing.coordinate,
                       timestamp: crossing.timestamp)
        }
    }

    /// The live measurements on a track.
    func makeSnapshot(_ track: LiveTrack) -> RunSnapshot {
        let last = track.last!
        let nextIndex = Badges.firstIndex(fartherThan: last.distance)
        let next = nextIndex < Badges.all.count ? Badges.all[nextIndex] : nil
        return RunSnapshot(distance: last.distance, elapsed: last.timestamp - startTimestamp,
                           movingTime: last.movingTime, averagePace: Self.pace(last.movingTime, last.distance),
                           currentPace: currentPace(track), coordinate: last.coordinate, timestamp: last.timestamp,
                           nextBadge: next, distanceToNextBadge: next.map { $0.distance - last.distance } ?? 0)
    }

    /// Pace over the last ``TrackerConfiguration/currentPaceWindow`` seconds of moving time; nil when the
    /// runner is standing still or the run is younger than the window.
    private func currentPace(_ track: LiveTrack) -> Double? {
        guard let last = track.last, last.moving,
              let index = track.lastIndex(atOrBefore: last.timestamp - configuration.currentPaceWindow)
        else { return nil }
        let reference = track.point(at: index)
        return Self.pace(last.movingTime - reference.movingTime, last.distance - reference.distance)
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
