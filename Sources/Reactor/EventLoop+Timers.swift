extension EventLoop {
    /// Seconds to nanoseconds; negative or NaN means "now", infinite is capped at ~292 years.
    private static func nanoseconds(_ seconds: Double) -> UInt64 {
        guard seconds > 0 else { return 0 }
        return seconds >= 9.2e9 ? UInt64(Int64.max) : UInt64(seconds * 1e9)
    }

    /// Calls `body` on the loop thread every `interval` seconds, first after one interval. Loop thread only.
    ///
    /// Timers are implemented with the `epoll_wait` timeout (millisecond resolution), not timerfd,
    /// so they cost no descriptor. They fire in the timer phase of a turn, after event handlers and
    /// queued tasks. The interval is at least one microsecond.
    @discardableResult
    public func schedule(every interval: Double, _ body: @escaping () -> Void) -> TimerID {
        assertLoopThread()
        let step = Swift.max(Self.nanoseconds(interval), 1_000)
        return timers.add(deadline: Syscall.monotonicNanoseconds() &+ step, interval: step, body: body)
    }

    /// Calls `body` once on the loop thread after `delay` seconds. Loop thread only.
    @discardableResult
    public func schedule(after delay: Double, _ body: @escaping () -> Void) -> TimerID {
        assertLoopThread()
        return timers.add(deadline: Syscall.monotonicNanoseconds() &+ Self.nanoseconds(delay), interval: nil, body: body)
    }

    /// Cancels a timer; harmless if it already fired or was cancelled. Loop thread only.
    /// A timer may cancel itself (or another timer due in the same turn) from its body.
    public func cancel(_ timer: TimerID) {
        assertLoopThread()
        timers.cancel(timer)
    }

    /// How many timers are pending. Loop thread only.
    public var scheduledTimerCount: Int {
        assertLoopThread()
        return timers.timers.count
    }

    /// Fires the timers due at the start of this phase; ones they schedule wait for a later turn.
    func runExpiredTimers() {
        let now = Syscall.monotonicNanoseconds()
        let due = timers.popExpired(now: now)
        for id in due {
            // Fetched one at a time, outside any access to `timers`, because bodies mutate it.
            guard let body = timers.takeBody(of: id, now: now) else { continue }
            body()
        }
    }
}
