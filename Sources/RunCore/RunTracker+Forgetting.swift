/// A tracker that does not keep its track (``TrackerConfiguration/keepsTrack`` false): what it measures on
/// the final points as they are made, and which of them it forgets.
///
/// Final points never change, and every cursor into the track only moves forward, so a final point older than
/// every cursor is never read again. The newest final point is kept too: a split or badge searched for on the
/// next fix lies beyond the distance reached now, so a search from the kept points finds the crossing a search
/// of the whole track would (``CumulativeTrack/crossing(of:)``). The splits and checkpoints of the summary are
/// measured on the final points as they are made, the same searches on the same points as ``finish()`` makes
/// on a kept track, so they are the same to the last bit.
extension RunTracker {
    /// Points the tracker holds in memory now: final points (kept, or forgotten but not yet dropped from
    /// storage), settling points and the smoothing window's steps. With ``TrackerConfiguration/keepsTrack``
    /// false it is bounded by the configuration's windows (a few hundred at 1 fix/s), whatever the run's length.
    public var storedPointCount: Int { committed.storedCount + settling.storedCount + smoother.storedCount }

    /// Measures the splits and checkpoints that the final points added now complete.
    mutating func measureFinalPoints() {
        guard let last = committed.last else { return }
        if finalSplitCounter.isDue(at: last.distance) {
            finalSplits += finalSplitCounter.collect(upTo: last.distance, start: startTimestamp, on: committed)
        }
        finalCheckpoints += finalCheckpointCounter.collect(upTo: last.distance, start: startTimestamp, on: committed)
    }

    /// Forgets the final points no cursor reaches any more.
    mutating func forgetUnreachablePoints() {
        guard committed.count > 0 else { return }
        var oldest = min(committed.count - 1, paceCursor, gatePastCursor, settling.oldestIndexInUse)
        if let past = smoother.oldestGatePast { oldest = min(oldest, past) }
        committed.forget(before: oldest)
    }

    /// The summary's splits and checkpoints: those measured on the final points, then those on the rest of
    /// `track` (the settling points and the tail, after the newest final point).
    func measuredToEnd(of track: LiveTrack) -> (splits: [Split], checkpoints: [CheckpointSplit]) {
        let distance = track.distance
        var splitCounter = finalSplitCounter, checkpointCounter = finalCheckpointCounter
        return (finalSplits + splitCounter.collect(upTo: distance, start: startTimestamp, on: track),
                finalCheckpoints + checkpointCounter.collect(upTo: distance, start: startTimestamp, on: track))
    }
}
