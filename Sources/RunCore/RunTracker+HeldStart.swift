/// The start of a run from a phone that was offline: its first fixes arrive late, all of them older than the
/// staleness allowance. One stale fix alone is what a GPS session begins with (the phone's last known, cached
/// position); a stale fix followed closely by the next of the same recording is a queue sent late. So a stale
/// first fix is held, and the next fix decides (``FilterConfiguration/recordingGap``).
extension RunTracker {
    /// Offers one fix; `now` is the receiving clock (unix seconds) for the staleness and future rules.
    ///
    /// Before the run starts, a stale fix is ``FixOutcome/held``. The next fix either continues its recording
    /// (within the recording gap and the speed limit, on either side of it): then the run starts at the earlier
    /// of the two, both accepted, and the outcome is the progress with `started` true; or it does not: the held
    /// fix is counted `stale` and dropped, and this fix is judged as a first fix.
    public mutating func add(_ fix: Fix, now: Double) -> FixOutcome {
        if droppedStart != nil { droppedStart = nil }
        guard projection == nil else { return admitAfterAnyPause(fix, now: now) }
        if let held = heldStart {
            heldStart = nil
            if fix.timestamp == held.timestamp {
                heldStart = held  // a resend of the held fix: still held, counted as a duplicate
                rejections[.duplicate, default: 0] += 1
                return .rejected(.duplicate)
            }
            if continuesRecording(of: held, with: fix, now: now) {
                let (first, second) = held.timestamp < fix.timestamp ? (held, fix) : (fix, held)
                // The earlier fix starts the run as if received when it was recorded: it is the start of a
                // recording, not a cached position.
                guard case .accepted(let start) = admit(first, now: first.timestamp),
                      case .accepted(let next) = admit(second, now: max(now, second.timestamp)) else {
                    preconditionFailure("a fix that continues the held recording is accepted")
                }
                return .accepted(RunProgress(started: true, snapshot: next.snapshot, awards: start.awards + next.awards,
                                             splits: start.splits + next.splits))
            }
            rejections[.stale, default: 0] += 1
            droppedStart = held
        }
        if filter.staticRejection(of: fix, now: now) == .stale {
            heldStart = fix
            heldAt = now
            return .held
        }
        return admit(fix, now: now)
    }

    /// The time the run started (its first accepted fix's, or the clock's start when earlier), nil before.
    public var startedAt: Double? { projection == nil ? nil : startTimestamp }

    /// Starts the run's clock at `timestamp`, the first point a recorded file has: elapsed time, splits and
    /// badge times then count from it even when the filter refuses that point (a handheld GPS's first fix,
    /// often inaccurate), as the device's own timer did. It takes effect only when earlier than the first
    /// accepted fix, and only before it: a live run's clock starts at its first accepted fix.
    public mutating func startClock(at timestamp: Double) {
        guard projection == nil, timestamp.isFinite else { return }
        clockStart = timestamp
    }

    /// True when `fix` is the next (or previous) fix of the recording `held` began: valid, within the
    /// recording gap of it or half its age, and no faster than a runner from it.
    private mutating func continuesRecording(of held: Fix, with fix: Fix, now: Double) -> Bool {
        let rejection = filter.staticRejection(of: fix, now: now)
        let gap = abs(fix.timestamp - held.timestamp)
        guard rejection == nil || rejection == .stale,
              gap <= max(configuration.filter.recordingGap, (heldAt - held.timestamp) / 2) else { return false }
        let (first, second) = held.timestamp < fix.timestamp ? (held, fix) : (fix, held)
        return filter.impliedSpeed(from: first, to: second) <= configuration.filter.maximumSpeed
    }
}
