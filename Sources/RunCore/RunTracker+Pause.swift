/// Pauses: a runner who stops the watch (a new `<trkseg>` in a GPX file, a new `<Track>` in a TCX lap).
///
/// A pause cuts the track the way a re-anchor does: the smoother keeps no link across it, so no distance and
/// no moving time are counted across the gap, and the still/moving gate looks only at points after it.
/// Elapsed time still runs, so a split that contains a pause is that much longer; the splits after it are
/// measured as usual. The first fix after a pause is not judged as a jump from the fix before it (the runner
/// may well have walked off while the watch was stopped), but it must still be later than that fix.
extension RunTracker {
    /// Ends the current track segment: the next accepted fix given to ``addNotingSegment(_:now:)`` starts a
    /// new one. Before the first accepted fix, and right after another pause, it does nothing.
    public mutating func pause() {
        guard projection != nil, !isPaused else { return }
        advanceWindow(committing: smoother.count)
        gateSegmentStart = settledCount
        // A fresh smoother has no previous step, so the next update restarts the filter; the window is empty
        // after the commit, so nothing else is lost.
        smoother = KalmanSmoother(configuration)
    }

    /// True between a ``pause()`` and the next accepted fix: the window is empty and the current segment
    /// has no point yet (at any other time the newest point is in the window or, with no lag, settling or final
    /// after the segment's start).
    public var isPaused: Bool { projection != nil && smoother.count == 0 && gateSegmentStart == settledCount }

    /// Offers one fix like ``add(_:now:)`` and says whether it began a new track segment: the first fix
    /// accepted after a ``pause()`` or after a gap that was a pause (see ``FilterConfiguration/pauseGap``), or
    /// one the filter re-anchored on after a jump. The first fix of the run begins the first segment and does
    /// not count.
    public mutating func addNotingSegment(_ fix: Fix, now: Double) -> (outcome: FixOutcome, startsSegment: Bool) {
        let resuming = isPaused, gapPauses = recordingGaps.count
        let segmentStart = gateSegmentStart
        let outcome = add(fix, now: now)
        guard case .accepted = outcome else { return (outcome, false) }
        return (outcome, resuming || recordingGaps.count != gapPauses || gateSegmentStart != segmentStart)
    }

    /// Pauses found in the recording's gaps so far (each also ends a segment, as a ``pause()`` does).
    public var pausesInGaps: Int { recordingGaps.count }

    /// A fix of a started run: first a pause when the silence before it was one (a valid fix only: a fix the
    /// filter refuses says nothing of where the runner went), then, when the run is paused, a filter that
    /// does not judge the fix as a jump from the one before the pause.
    mutating func admitAfterAnyPause(_ fix: Fix, now: Double) -> FixOutcome {
        if !isPaused, let last = filter.lastAccepted, recordingGaps.isGap(fix.timestamp - last.timestamp),
           filter.staticRejection(of: fix, now: now) == nil,
           recordingGaps.isPause(crossedAt: filter.impliedSpeed(from: last, to: fix)) {
            pause()
        }
        let resuming = isPaused
        if resuming, let last = lastAcceptedTimestamp {
            // The filter judges jumps from its last accepted fix. After a pause that is a stand-in at the new
            // fix's own position and the old fix's time: the jump rule sees no movement, while the duplicate
            // and order rules still compare with the fix before the pause.
            var filter = FixFilter(configuration: configuration.filter)
            _ = filter.judge(Fix(latitude: fix.latitude, longitude: fix.longitude, accuracy: 0, timestamp: last),
                             now: last)
            self.filter = filter
        }
        let previous = lastAcceptedTimestamp
        let outcome = admit(fix, now: now)
        if !resuming, case .accepted = outcome, let previous { recordingGaps.noteInterval(fix.timestamp - previous) }
        return outcome
    }
}
