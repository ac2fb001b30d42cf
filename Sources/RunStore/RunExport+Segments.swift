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
        for stored in fixes.sorted(by: { $0.sequence < $1.sequence }) {
            if pauses.contains(stored.sequence) { tracker.pause() }
            let startsSegment = tracker.addNotingSegment(stored.fix, now: stored.received).startsSegment
            guard stored.isAccepted else { continue }
            if segments.isEmpty || startsSegment { segments.append([]) }
            segments[segments.count - 1].append(stored.fix)
        }
        return segments
    }

    /// Indices into the accepted fixes (in sequence order) of the first fix of each segment after the first:
    /// the route is not drawn from the fix before to these.
    static func segmentStarts(of fixes: [StoredFix], pausesBefore: [Int64] = []) -> Set<Int> {
        var starts = Set<Int>(), index = 0
        for segment in segments(of: fixes, pausesBefore: pausesBefore) {
            if index > 0 { starts.insert(index) }
            index += segment.count
        }
        return starts
    }
}
