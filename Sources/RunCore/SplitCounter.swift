/// Finds km and mile splits as a run's distance grows, each exactly once.
struct SplitCounter: Sendable, Hashable {
    /// Progress through one unit's splits.
    private struct UnitProgress: Sendable, Hashable {
        let unit: SplitUnit
        /// The next split number to look for.
        var next = 1
        /// Elapsed time at the previous split (0 at the start).
        var previousElapsed = 0.0

        /// Distance of the next split, metres.
        var nextDistance: Double { Double(next) * unit.metres }
    }

    private var kilometres = UnitProgress(unit: .kilometre)
    private var miles = UnitProgress(unit: .mile)

    /// Whether a track reaching `distance` completes a split (the common case, on almost every fix: no).
    func isDue(at distance: Double) -> Bool {
        distance >= kilometres.nextDistance || distance >= miles.nextDistance
    }

    /// The splits completed now that the track reaches `distance`, in order of distance.
    mutating func collect(upTo distance: Double, start: Double, on track: some CumulativeTrack) -> [Split] {
        guard isDue(at: distance) else { return [] }
        var found: [(distance: Double, split: Split)] = []
        for keyPath in [\SplitCounter.kilometres, \SplitCounter.miles] {
            var progress = self[keyPath: keyPath]
            while distance >= progress.nextDistance, let crossing = track.crossing(of: progress.nextDistance) {
                let elapsed = crossing.timestamp - start
                let duration = elapsed - progress.previousElapsed
                let split = Split(unit: progress.unit, number: progress.next, elapsed: elapsed, duration: duration,
                                  pace: duration / progress.unit.metres * 1000)
                found.append((progress.nextDistance, split))
                progress.previousElapsed = elapsed
                progress.next += 1
            }
            self[keyPath: keyPath] = progress
        }
        return found.sorted { $0.distance < $1.distance }.map(\.split)
    }
}
