/// Finds the pauses hidden in a recording's gaps (see ``FilterConfiguration/pauseGap``).
///
/// Why from the gap itself: a watch on auto-pause, or a phone app sending only after moving some metres, says
/// nothing while its wearer stands, and the fixes on either side of the silence are a few metres apart.
/// Measured as one straight step, such a gap adds little distance but all of its time as moving: minutes of
/// standing counted as running. A gap crossed at walking pace or slower is taken for a pause, however long; one
/// crossed at running pace (a tunnel) is not, whatever its length.
struct RecordingGaps: Sendable {
    let configuration: FilterConfiguration
    /// A running average of the intervals between accepted fixes that were not gaps; nil before the second fix.
    private(set) var usualInterval: Double?
    /// Pauses found in gaps so far.
    private(set) var count = 0

    init(configuration: FilterConfiguration) {
        self.configuration = configuration
    }

    /// The shortest interval that is a gap now.
    var shortestGap: Double {
        max(configuration.pauseGap, configuration.pauseGapIntervals * (usualInterval ?? 0))
    }

    /// True when a silence this long may be a pause: the cheap half of the test, made on every fix, so the
    /// filter's rules and the speed across are looked at only after a gap. Not before the recording's rate is
    /// known (one interval): an app that records every 15 s shows it with its first.
    func isGap(_ silence: Double) -> Bool {
        usualInterval != nil && silence >= shortestGap
    }

    /// Counts a gap crossed at `speed` m/s as a pause when that is walking pace or slower.
    mutating func isPause(crossedAt speed: Double) -> Bool {
        guard speed <= configuration.pauseGapSpeed else { return false }
        count += 1
        return true
    }

    /// Notes the interval between two accepted fixes of one stretch (not across a pause).
    mutating func noteInterval(_ seconds: Double) {
        guard seconds > 0, usualInterval == nil || seconds < shortestGap else { return }
        // A fifth of each new interval: a few fixes follow a change of the app's rate, one odd interval barely
        // moves it.
        usualInterval = usualInterval.map { $0 + (seconds - $0) / 5 } ?? seconds
    }
}
