import RunCore

extension RunExport {
    /// A run's accepted fixes in track segments, as the engine measured them: a new segment after each pause
    /// of an imported run (``ImportRecord/pausesBefore``) and at each re-anchor after a jump, so that an
    /// export read back measures the same. Neither is stored per fix, so they are found by replaying the
    /// stored fixes through a tracker with their receiving times, as crash recovery does; which fixes are
    /// included is the stored verdict.
    public static func segments(of fixes: [StoredFix], pausesBefore: [Int64] = []) -> [[Fix]] {
        var tracker = RunTracker()
        let pauses = Set(pausesBefore)
        var segments: [[Fix]] = []
        for stored in StoredFix.inTimeOrder(fixes) {
            if pauses.contains(stored.sequence) { tracker.pause() }
            let startsSegment = tracker.addNotingSegment(stored.fix, now: stored.received).startsSegment
            guard stored.isAccepted else { continue }
            if segments.isEmpty || startsSegment { segments.append([]) }
            segments[segments.count - 1].append(stored.fix)
        }
        return segments
    }

    /// The track the run page draws, for the SVG and GeoJSON exports: the stored fixes replayed through a
    /// tracker as the server measures a run for the page (each with its receiving time), and `points` the
    /// smoothed position of each fix it accepts, the track's own. The raw fixes zig-zag with GPS noise, which
    /// adds length to every segment and made the pace colours confetti; these points are what
    /// `/api/runs/ID` and the event stream's `track` give the page (``PaceColours`` then colours them alike).
    /// `segmentStarts`: indices of the points that begin a segment after the first (after a pause of an
    /// imported run, or a re-anchor after a jump); the route is not drawn from the point before to these.
    static func measuredTrack(of fixes: [StoredFix], pausesBefore: [Int64] = [],
                              configuration: TrackerConfiguration = .init()) -> (points: [Fix], segmentStarts: Set<Int>) {
        var tracker = RunTracker(configuration: configuration)
        let pauses = Set(pausesBefore)
        var starts = Set<Int>(), accepted = 0
        for stored in StoredFix.inTimeOrder(fixes) {
            if pauses.contains(stored.sequence) { tracker.pause() }
            let (outcome, startsSegment) = tracker.addNotingSegment(stored.fix, now: stored.received)
            guard case .accepted = outcome else { continue }
            if startsSegment { starts.insert(accepted) }
            accepted += 1
        }
        return (tracker.finish().track, starts)
    }
}
