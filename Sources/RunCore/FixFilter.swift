/// Decides, rule by rule, whether a fix may join the run (see ``FilterConfiguration`` for the rules).
///
/// The rules are checked in this order, and the first that fails names the rejection:
/// invalid coordinates or timestamp, accuracy, future, stale start, duplicate, out of order, jump.
struct FixFilter: Sendable {
    /// What to do with a fix.
    enum Verdict: Sendable, Equatable {
        /// Accept it, continuing the run.
        case accept
        /// Accept it, but start a new track segment: the last accepted fix was the odd one out.
        case reanchor
        /// Reject it.
        case reject(FixRejection)
    }

    let configuration: FilterConfiguration
    /// The last accepted fix (raw, as the phone sent it).
    private(set) var lastAccepted: Fix?
    /// The local scale used for implied speeds, and the latitude it was computed at.
    private var scale = (latitude: Double.infinity, metres: LocalScale(latitude: 0))
    /// Consecutive jump-rejected fixes that agree with each other.
    private var candidates: [Fix] = []

    init(configuration: FilterConfiguration) {
        self.configuration = configuration
    }

    /// Judges a fix against the rules and, when it is accepted, remembers it.
    mutating func judge(_ fix: Fix, now: Double) -> Verdict {
        if let reason = staticRejection(of: fix, now: now) { return .reject(reason) }
        guard let last = lastAccepted else {
            lastAccepted = fix
            return .accept
        }
        if fix.timestamp == last.timestamp { return .reject(.duplicate) }
        if fix.timestamp < last.timestamp { return .reject(.outOfOrder) }
        guard impliedSpeed(from: last, to: fix) > configuration.maximumSpeed else {
            if !candidates.isEmpty { candidates.removeAll(keepingCapacity: true) }
            lastAccepted = fix
            return .accept
        }
        // A jump. If the fixes since the last accepted one agree with each other, the last accepted
        // fix is the one that was wrong (or the runner truly moved during a gap): re-anchor on them.
        if let previous = candidates.last, fix.timestamp > previous.timestamp,
           impliedSpeed(from: previous, to: fix) <= configuration.maximumSpeed {
            candidates.append(fix)
        } else {
            candidates = [fix]
        }
        guard candidates.count >= max(configuration.reanchorCount, 1) else { return .reject(.jump) }
        candidates.removeAll(keepingCapacity: true)
        lastAccepted = fix
        return .reanchor
    }

    /// The rules that need no run history, plus the start-of-run staleness rule.
    func staticRejection(of fix: Fix, now: Double) -> FixRejection? {
        let validCoordinates = fix.latitude.isFinite && fix.longitude.isFinite
            && (-90...90).contains(fix.latitude) && (-180...180).contains(fix.longitude)
            && !(fix.latitude == 0 && fix.longitude == 0)
        guard validCoordinates, fix.timestamp.isFinite else { return .invalid }
        guard fix.accuracy.isFinite, fix.accuracy >= 0, fix.accuracy < configuration.maximumAccuracy else {
            return .inaccurate
        }
        if now.isFinite, fix.timestamp - now > configuration.futureAllowance { return .future }
        if lastAccepted == nil, now.isFinite, now - fix.timestamp > configuration.staleStartAge { return .stale }
        return nil
    }

    /// Metres per second between two fixes, judged over at least one second so 5 Hz jitter is not a sprint.
    /// A threshold test needs no geodesic precision: a flat-earth distance with the local scale, refreshed
    /// when the latitude moves by a tenth of a degree, is within a fraction of a percent.
    mutating func impliedSpeed(from a: Fix, to b: Fix) -> Double {
        if abs(a.latitude - scale.latitude) > 0.1 { scale = (a.latitude, LocalScale(latitude: a.latitude)) }
        let east = Geodesy.normalisedDegrees(b.longitude - a.longitude) * scale.metres.metresPerDegreeEast
        let north = (b.latitude - a.latitude) * scale.metres.metresPerDegreeNorth
        return (east * east + north * north).squareRoot() / max(b.timestamp - a.timestamp, 1)
    }
}
