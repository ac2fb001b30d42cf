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
    /// segment on the ellipsoid (see ``SegmentMeter``).
    mutating func commitSteps(_ count: Int) {
        guard count > 0, let projection else { return }
        var future = 0, past = committedGatePast, moving = committedMoving
        var previousCoordinate = lastCommittedCoordinate
        for index in 0..<count {
            let gate = gateSpeed(ofStep: index, future: &future, past: &past, built: committed, tail: [])
            let state = smoother.smoothed(at: index)
            let coordinate = projection.coordinate(east: state[0], north: state[2])
            moving = moving ? gate >= configuration.stillSpeed : gate >= configuration.movingSpeed
            var point = TrackPoint(east: state[0], north: state[2], timestamp: smoother.timestamp(at: index),
                                   accuracy: smoother.accuracy(at: index), moving: moving, distance: 0, movingTime: 0)
            if let previous = committed.last {
                point.distance = previous.distance
                point.movingTime = previous.movingTime
                if moving, !smoother.startsSegment(at: index), let previousCoordinate {
                    point.distance += segmentMeter.distance(from: previousCoordinate, to: coordinate)
                    point.movingTime += point.timestamp - previous.timestamp
                }
            }
            committed.append(point)
            previousCoordinate = coordinate
        }
        committedGatePast = past
        committedMoving = moving
        lastCommittedCoordinate = previousCoordinate
        smoother.dropOldest(count)
    }

    /// Rebuilds the provisional points of the lag window from the latest smoothing.
    mutating func rebuildTail() {
        tail.removeAll(keepingCapacity: true)
        let count = smoother.count
        guard let projection, count > 0 else { return }
        let newest = smoother.smoothed(at: count - 1)
        let latitude = projection.coordinate(east: newest[0], north: newest[2]).latitude
        // The tail spans seconds of running, so one local scale turns frame metres into true metres for all
        // of it; it is recomputed only when the runner has moved about 100 m north or south (the scale
        // changes by a few parts in 10⁵ over that: a fraction of a millimetre on a provisional tail).
        if abs(latitude - tailScale.latitude) > 0.001 {
            let scale = LocalScale(latitude: latitude)
            tailScale = (latitude, scale.metresPerDegreeEast / projection.metresPerDegreeEast,
                         scale.metresPerDegreeNorth / projection.metresPerDegreeNorth)
        }
        let eastRatio = tailScale.eastRatio, northRatio = tailScale.northRatio
        var moving = committedMoving
        var past = committedGatePast, future = 0
        var previous = committed.last
        for index in 0..<count {
            let gate = gateSpeed(ofStep: index, future: &future, past: &past, built: committed, tail: tail)
            let state = smoother.smoothed(at: index)
            moving = moving ? gate >= configuration.stillSpeed : gate >= configuration.movingSpeed
            var point = TrackPoint(east: state[0], north: state[2], timestamp: smoother.timestamp(at: index),
                                   accuracy: smoother.accuracy(at: index), moving: moving, distance: 0, movingTime: 0)
            if let previous {
                point.distance = previous.distance
                point.movingTime = previous.movingTime
                if moving, !smoother.startsSegment(at: index) {
                    let east = (point.east - previous.east) * eastRatio
                    let north = (point.north - previous.north) * northRatio
                    point.distance += (east * east + north * north).squareRoot()
                    point.movingTime += point.timestamp - previous.timestamp
                }
            }
            tail.append(point)
            previous = point
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
    private func gateSpeed(ofStep windowIndex: Int, future: inout Int, past: inout Int,
                           built committed: [TrackPoint], tail: [TrackPoint]) -> Double {
        let half = configuration.gateWindow / 2
        let timestamp = smoother.timestamp(at: windowIndex), state = smoother.smoothed(at: windowIndex)
        let startsSegment = smoother.startsSegment(at: windowIndex)
        future = max(future, windowIndex)
        while future + 1 < smoother.count, smoother.timestamp(at: future + 1) <= timestamp + half,
              !smoother.startsSegment(at: future + 1) { future += 1 }
        let builtCount = committed.count + tail.count
        func builtPoint(_ i: Int) -> TrackPoint { i < committed.count ? committed[i] : tail[i - committed.count] }
        while past + 1 < builtCount, builtPoint(past + 1).timestamp <= timestamp - half { past += 1 }
        var fromTime = timestamp, fromEast = state[0], fromNorth = state[2]
        if !startsSegment, past < builtCount, past >= gateSegmentStart {
            let p = builtPoint(past)
            if p.timestamp < timestamp { (fromTime, fromEast, fromNorth) = (p.timestamp, p.east, p.north) }
        }
        let span = smoother.timestamp(at: future) - fromTime
        guard span > 0 else { return 0 }
        let to = smoother.smoothed(at: future)
        let east = to[0] - fromEast, north = to[2] - fromNorth
        return (east * east + north * north).squareRoot() / span
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

    /// The live measurements on a track.
    mutating func makeSnapshot(_ track: LiveTrack) -> RunSnapshot {
        let last = track.last!
        let nextIndex = Badges.firstIndex(fartherThan: last.distance)
        let next = nextIndex < Badges.all.count ? Badges.all[nextIndex] : nil
        return RunSnapshot(distance: last.distance, elapsed: last.timestamp - startTimestamp,
                           movingTime: last.movingTime, averagePace: Self.pace(last.movingTime, last.distance),
                           currentPace: currentPace(track),
                           coordinate: coordinate(of: Crossing(timestamp: last.timestamp, east: last.east, north: last.north)),
                           timestamp: last.timestamp, nextBadge: next,
                           distanceToNextBadge: next.map { $0.distance - last.distance } ?? 0)
    }

    /// Pace over the last ``TrackerConfiguration/currentPaceWindow`` seconds of moving time; nil when the
    /// runner is standing still or the run is younger than the window.
    private mutating func currentPace(_ track: LiveTrack) -> Double? {
        guard let last = track.last, last.moving else { return nil }
        let cutoff = last.timestamp - configuration.currentPaceWindow
        // The reference point only moves forward, so a cursor into the committed track finds it in a step or two.
        while paceCursor + 1 < committed.count, committed[paceCursor + 1].timestamp <= cutoff { paceCursor += 1 }
        let reference: TrackPoint
        let referenceInTail = paceCursor + 1 >= committed.count && (tail.first.map { $0.timestamp <= cutoff } ?? false)
        if !referenceInTail, paceCursor < committed.count, committed[paceCursor].timestamp <= cutoff {
            reference = committed[paceCursor]
        } else if let index = track.lastIndex(atOrBefore: cutoff) {
            reference = track.point(at: index)  // a window shorter than the lag: the reference is in the tail
        } else {
            return nil
        }
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
