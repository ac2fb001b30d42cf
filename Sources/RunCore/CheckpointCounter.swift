/// Finds the pace between consecutive badges as a run's final track grows, each stretch exactly once: what
/// ``RunTracker/finish()`` reports when the tracker does not keep its whole track
/// (``TrackerConfiguration/keepsTrack``), measured on the final points as they are made.
struct CheckpointCounter: Sendable, Hashable {
    /// Index in ``Badges/all`` of the next badge whose stretch is looked for.
    private var next = 1
    /// Index in ``Badges/all`` of the badge the next stretch starts at (Earth for the first).
    private var from = 0
    /// Elapsed time at the start of the next stretch (0 at the start).
    private var fromElapsed = 0.0

    /// The stretches completed now that the track reaches `distance`, in order.
    mutating func collect(upTo distance: Double, start: Double, on track: some CumulativeTrack) -> [CheckpointSplit] {
        let badges = Badges.all
        guard next < badges.count, distance >= badges[next].distance else { return [] }
        var result: [CheckpointSplit] = []
        while next < badges.count, distance >= badges[next].distance,
              let crossing = track.crossing(of: badges[next].distance) {
            let elapsed = crossing.timestamp - start
            let duration = elapsed - fromElapsed
            result.append(CheckpointSplit(from: badges[from], to: badges[next], duration: duration,
                                          pace: duration / (badges[next].distance - badges[from].distance) * 1000))
            from = next
            fromElapsed = elapsed
            next += 1
        }
        return result
    }
}
