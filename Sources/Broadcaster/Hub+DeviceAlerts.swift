import Wire

/// What a phone says about its runner besides where they are: an SOS, and its battery.
extension Hub {
    /// An app raised an alarm (`sos`, …) with a position of the runner's: to the runner's coaches at once.
    /// Called for every position that carries an alarm, before the position goes through the engine (an SOS is
    /// never held behind a backlog); a resent alarm (same timestamp) must not alert twice.
    func raiseAlarm(_ alarm: String, at location: LocationCommand, for entry: RunnerEntry, now: Double) {
        // Issue 25: SOS (helper C).
    }

    /// The phone's battery level (percent) with a position stamped `time` (the newest stamp wins).
    func noteBattery(_ level: Double, at time: Double, for entry: RunnerEntry, now: Double) {
        // Issue 25: battery (helper C).
    }
}
