import Foundation

/// Counts a run's elevation gain and loss from the altitudes of its accepted fixes, one at a time, in constant
/// work and memory per fix (a live run lasts hours and its tracker may not keep its track).
///
/// GPS altitude is noisy (a phone's is off by 5 m or more from one second to the next, and drifts), and simply
/// adding up every rise would count that noise as climbing: a flat hour at 1 Hz would "climb" kilometres. So,
/// as serious trackers do, two stages:
///
/// 1. **Smoothing.** A time-based exponential average with time constant ``smoothingTime`` (the weight of a fix
///    follows the time since the last one), but no fix weighs more than 1/``minimumFixes``: the noise is per
///    fix, so fixes every 5 s still average several fixes' worth rather than following each one. Until the
///    average has that many fixes it is their plain mean (the first altitude is as noisy as any).
/// 2. **Hysteresis.** The smoothed altitude counts as climbing only once it has risen ``threshold`` metres
///    above the last low turning point (and as descending once it has fallen that far below the last high
///    one); while going one way, each new extreme adds its difference. Wiggles smaller than the threshold
///    count nothing, a long climb counts in full. Nothing counts in the first ``smoothingTime`` seconds, while
///    the average settles.
///
/// The defaults suit phone GPS altitude; a barometric altitude (smooth already) loses at most the threshold
/// on a bump smaller than it, and a little at each summit from the smoothing's lag.
public struct ElevationMeter: Sendable, Hashable {
    /// Seconds of the exponential smoothing's time constant. Default 25: it brings 5 m of independent noise per
    /// fix at 1 Hz down to about 0.7 m. Its lag costs nothing on a long climb (the hysteresis counts all of it
    /// once the smoothed altitude gets there) but rounds summits off: about 2% of the gain on hills of 40 m.
    /// Shorter (10 s, with a 4 m threshold) counted 5 m noise as 15-20% more climbing on a 100 m climb and as
    /// some 100 m an hour on the flat.
    public var smoothingTime: Double = 25
    /// The least number of fixes the average spans, whatever their spacing. Default 8.
    public var minimumFixes: Double = 8
    /// Metres the smoothed altitude must move from the last turning point before a climb or descent counts.
    /// Default 5: about 7 times the smoothed noise of 1 Hz fixes, below the height of a hill worth counting.
    public var threshold: Double = 5

    /// The smoothed altitude, nil before the first altitude.
    public private(set) var smoothed: Double?
    /// The last turning point: the highest smoothed altitude while climbing, the lowest while descending, the
    /// first altitude before either has been decided.
    private var anchor = 0.0
    /// +1 climbing, -1 descending, 0 not decided yet.
    private var direction = 0
    /// Time of the last altitude fed.
    private var lastTimestamp = 0.0
    /// Time of the first altitude fed.
    private var firstTimestamp = 0.0
    /// Altitudes averaged so far.
    private var count = 0.0
    /// Metres climbed so far.
    public private(set) var gain = 0.0
    /// Metres descended so far (a positive number).
    public private(set) var loss = 0.0

    /// A meter with the default smoothing and threshold.
    public init() {}

    /// A meter with this smoothing time constant (seconds) and hysteresis threshold (metres).
    public init(smoothingTime: Double, threshold: Double) {
        self.smoothingTime = smoothingTime
        self.threshold = threshold
    }

    /// Whether any altitude has been fed: gain and loss mean something.
    public var hasAltitude: Bool { smoothed != nil }

    /// The gain so far, nil when no fix had an altitude.
    public var measuredGain: Double? { smoothed == nil ? nil : gain }
    /// The loss so far, nil when no fix had an altitude.
    public var measuredLoss: Double? { smoothed == nil ? nil : loss }

    /// Takes the altitude of the next accepted fix, in time order. Non-finite altitudes are ignored.
    @inline(__always)
    public mutating func add(altitude: Double, timestamp: Double) {
        guard Fix.plausibleAltitudes.contains(altitude), timestamp.isFinite else { return }
        guard let previous = smoothed else {
            smoothed = altitude
            anchor = altitude
            lastTimestamp = timestamp
            firstTimestamp = timestamp
            count = 1
            return
        }
        let step = max(0, timestamp - lastTimestamp)
        lastTimestamp = timestamp
        count += 1
        let byTime = smoothingTime > 0 ? 1 - exp(-step / smoothingTime) : 1
        // The plain mean while there are few fixes: starting the average at the first altitude alone would walk
        // the smoothed value off its error, which the hysteresis could count as a climb.
        let weight = max(min(byTime, 1 / max(minimumFixes, 1)), 1 / count)
        let value = previous + weight * (altitude - previous)
        smoothed = value
        guard timestamp - firstTimestamp >= smoothingTime else {
            anchor = value
            return
        }
        // A step along the current direction always counts; a turn counts once it is the threshold deep
        // (from no direction yet, the first move that deep sets one).
        let change = value - anchor
        if change > 0, direction == 1 || change >= threshold {
            direction = 1
            gain += change
            anchor = value
        } else if change < 0, direction == -1 || -change >= threshold {
            direction = -1
            loss -= change
            anchor = value
        }
    }

    /// Gain and loss of a whole sequence of fixes (those without altitude skipped), measured as a run measures
    /// them live.
    public static func measure<Fixes: Sequence<Fix>>(_ fixes: Fixes, meter: ElevationMeter = .init())
        -> (gain: Double, loss: Double)? {
        var meter = meter
        for fix in fixes {
            if let altitude = fix.altitude { meter.add(altitude: altitude, timestamp: fix.timestamp) }
        }
        guard meter.hasAltitude else { return nil }
        return (meter.gain, meter.loss)
    }
}
