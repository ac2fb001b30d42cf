import Foundation
import RunCore
import Wire

extension Hub {
    /// Tells the runner's own connection why a fix started no run, once per reason per run attempt, so a person
    /// typing fixes by hand learns what to change; the count per run is bounded by the number of reasons.
    func noteUnstartedRun(_ reason: FixRejection, fix: Fix, in run: LiveRun, runner name: String,
                          to id: ConnectionID, now: Double) {
        guard run.notedReasons.insert(reason).inserted else { return }
        let text = Self.explanation(of: reason, fix: fix, now: now, filter: configuration.tracker.filter)
        send(NoteEvent(runner: name, reason: reason.rawValue, text: text), to: id)
    }

    /// What a runner should know about a fix the filter refused before the run started.
    static func explanation(of reason: FixRejection, fix: Fix, now: Double, filter: FilterConfiguration) -> String {
        switch reason {
        case .stale:
            "first fix is \(age(now - fix.timestamp)) old: a run starts with a current position, or with a "
                + "recording sent late (its next fix close to it in time); send the current time (date +%s)"
        case .future where looksLikeMilliseconds(fix.timestamp, now: now):
            "fix time \(String(format: "%.0f", fix.timestamp)) looks like milliseconds; "
                + "loc: takes unix seconds (date +%s)"
        case .future:
            "fix is \(age(fix.timestamp - now)) ahead of the server's clock: check the phone's clock"
        case .inaccurate:
            "accuracy \(fix.accuracy.isFinite ? String(format: "%.0f m", fix.accuracy) : "unknown") is not better "
                + "than \(String(format: "%.0f m", filter.maximumAccuracy)): wait for a better GPS fix"
        case .invalid:
            "position \(fix.latitude),\(fix.longitude) is not a real position (0,0 or out of range): "
                + "wait for a GPS fix"
        case .duplicate, .outOfOrder, .jump:
            "fix refused (\(reason.rawValue)): the run starts with the next good fix"
        }
    }

    /// True for a stamp about a thousand times the clock: a client sending milliseconds (JavaScript's
    /// `Date.now()`, Java's `currentTimeMillis()`) is told so, rather than that its fix is hundreds of millions
    /// of hours ahead. The band (100x to 10,000x) leaves out microseconds (a million times) and nonsense.
    private static func looksLikeMilliseconds(_ stamp: Double, now: Double) -> Bool {
        now > 0 && stamp >= now * 100 && stamp <= now * 10_000
    }

    /// `28 h`, `12 min`, `40 s`; whole units rounded down, never converted to an integer type (a `loc:` stamp
    /// may have 40 digits).
    private static func age(_ seconds: Double) -> String {
        let seconds = abs(seconds)
        let (amount, unit) = seconds >= 7200 ? (seconds / 3600, "h") : seconds >= 120 ? (seconds / 60, "min") : (seconds, "s")
        return String(format: "%.0f", amount.rounded(.down)) + " " + unit
    }
}
