/// The search for a fix's place on the course: a window of segments around the last match, never the whole
/// course, so a fix costs the same on a 5 km and a 100 km course.
extension CourseMatcher {
    /// The best place for a fix in the window, and how near the course comes to the fix there.
    struct Candidate: Sendable, Hashable {
        /// Metres along the course of the chosen place.
        var along: Double
        /// Its segment.
        var segment: Int
        /// The fix's distance from the chosen place, metres.
        var distance: Double
        /// The fix's distance from the nearest place in the window (the distance off the course), metres.
        var nearest: Double
    }

    /// Where a fix at flat-frame `east`/`north` at `time` most likely is.
    ///
    /// The window runs from ``CourseConfiguration/backTolerance`` behind the last match to
    /// ``CourseConfiguration/windowAhead`` + ``CourseConfiguration/topSpeed`` × seconds since it ahead (at most
    /// ``CourseConfiguration/maximumWindow``): nothing behind it can be chosen, so the runner never jumps back
    /// across an out-and-back, a loop or a crossing, and anything they can have reached since is in it. Before
    /// the first match it is the first ``CourseConfiguration/startWindow`` metres.
    ///
    /// Each segment's nearest point in the window is scored as a Gaussian's log-likelihood would:
    /// (distance / ``CourseConfiguration/distanceSpread``)² + (metres from the expected position / spread)², the
    /// expected position the along filter's prediction, its spread ``CourseConfiguration/minimumAlongSpread`` +
    /// ``CourseConfiguration/alongSpreadGrowth`` × seconds since the last match. Near an out-and-back's turn both
    /// legs are equally near; the expected position picks the leg the runner is on.
    ///
    /// A third term weighs the runner's motion over the last few seconds against each segment's direction:
    /// (motion not forward along the segment / ``CourseConfiguration/motionSpread``)². Where the expected
    /// position cannot tell (a fix lagging at the turn of an out-and-back on one road, a crossing), the way the
    /// runner is going does: on the way back they move backwards along the way out's segments.
    mutating func candidate(east: Double, north: Double, at time: Double) -> Candidate? {
        let lower: Double, upper: Double, expected: Double, spread: Double
        if let last = lastMatch {
            let since = max(0, time - last.time)
            lower = max(0, furthestMatch - configuration.backTolerance)
            upper = last.along + min(configuration.maximumWindow, configuration.windowAhead + configuration.topSpeed * since)
            expected = min(max(filter?.predicted(at: time) ?? last.along, lower), upper)
            spread = configuration.minimumAlongSpread + configuration.alongSpreadGrowth * since
        } else {
            lower = 0
            upper = configuration.startWindow
            expected = 0
            spread = configuration.startWindow
        }
        var segment = course.segment(containing: lower, near: lastMatch?.segment ?? 0)
        var best: Candidate?, bestScore = Double.infinity, nearest = Double.infinity
        var examined = 0
        let motion = self.motion(east: east, north: north, at: time)
        let lastSegment = course.distances.count - 2
        while segment <= lastSegment {
            examined += 1
            let place = course.nearest(east: east, north: north, segment: segment, from: lower, to: upper)
            let off = place.distance / configuration.distanceSpread, behind = (place.along - expected) / spread
            var score = off * off + behind * behind
            if let motion {
                score += self.motion(motion, against: segment) / (configuration.motionSpread * configuration.motionSpread)
            }
            nearest = min(nearest, place.distance)
            if score < bestScore {
                bestScore = score
                best = Candidate(along: place.along, segment: segment, distance: place.distance, nearest: 0)
            }
            if course.distances[segment + 1] >= upper { break }
            segment += 1
        }
        segmentsExamined = examined
        best?.nearest = nearest
        return best
    }

    /// The runner's velocity (m/s east, north) from the oldest recent fix to this one, nil without one at
    /// least a second old.
    func motion(east: Double, north: Double, at time: Double) -> (east: Double, north: Double)? {
        guard let oldest = recentFixes.first, time - oldest.time >= 1 else { return nil }
        let dt = time - oldest.time
        return ((east - oldest.east) / dt, (north - oldest.north) / dt)
    }

    /// The squared part of a velocity (m²/s²) that is not forward along a segment.
    func motion(_ velocity: (east: Double, north: Double), against segment: Int) -> Double {
        let shape = course.segments[segment]
        guard shape.inverseSquared > 0 else { return 0 }
        let forward = max(0, velocity.east * shape.unitEast + velocity.north * shape.unitNorth)
        let ex = velocity.east - forward * shape.unitEast, ey = velocity.north - forward * shape.unitNorth
        return ex * ex + ey * ey
    }
}
