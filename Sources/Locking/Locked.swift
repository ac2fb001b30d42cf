#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// State several threads share, behind one lock: `withLock` is the only way to it, so "guarded by the lock" is
/// checked by the compiler rather than said in a comment, and the classes that keep their state in one are
/// plain `Sendable`. The lock is a pthread mutex and condition variable (``ConditionLock``), which
/// ThreadSanitizer sees, unlike futex-based locks; its condition lets a thread wait for the state to change.
public final class Locked<State>: @unchecked Sendable {  // Sendable because `state` is only touched under `condition`.
    /// The lock (and its condition); inlined into callers, so a `withLock` costs what a lock and an unlock do.
    @usableFromInline let condition = ConditionLock()
    /// What the lock guards.
    @usableFromInline var state: State

    /// Guards `state`.
    public init(_ state: State) {
        self.state = state
    }

    /// Runs `body` on the state, under the lock.
    @inlinable
    public func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        condition.lock()
        defer { condition.unlock() }
        return try body(&state)
    }

    /// Waits until `ready` holds (the lock is released while waiting), then runs `body` on the state, under
    /// the lock.
    @inlinable
    public func withLock<Result, Failure: Error>(when ready: (State) -> Bool,
                                                 _ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        condition.lock()
        defer { condition.unlock() }
        while !ready(state) { condition.wait() }
        return try body(&state)
    }

    /// Waits until `ready` holds or `deadline` passes, then runs `body` on the state, under the lock; `body`'s
    /// second argument says whether `ready` held.
    @inlinable
    public func withLock<Result, Failure: Error>(when ready: (State) -> Bool, before deadline: Date,
                                                 _ body: (inout State, Bool) throws(Failure) -> Result) throws(Failure) -> Result {
        condition.lock()
        defer { condition.unlock() }
        var isReady = ready(state)
        while !isReady, condition.wait(until: deadline) { isReady = ready(state) }
        return try body(&state, isReady || ready(state))
    }

    /// Runs `step` on the state, under the lock, until it is done: each step decides, from the state and
    /// whether the last timed wait ran out (`timedOut`), to wait (the lock released meanwhile), to wait until
    /// a time, or to finish with a result. For waits whose rule changes as they go (a batch delay after the
    /// first write, a retry time kept across wake-ups): each step is a fresh access to the state, none held
    /// across a wait.
    @inlinable
    public func withLock<Result>(stepping step: (inout State, _ timedOut: Bool) -> LockStep<Result>) -> Result {
        condition.lock()
        defer { condition.unlock() }
        var timedOut = false
        while true {
            switch step(&state, timedOut) {
            case .done(let result):
                return result
            case .wait:
                condition.wait()
                timedOut = false
            case .waitUntil(let deadline):
                timedOut = !condition.wait(until: deadline)
            }
        }
    }

    /// Wakes one thread waiting in `withLock(when:…)` or `withLock(stepping:)` to look at the state again
    /// (call it after changing it, inside or after `withLock`).
    @inlinable
    public func signal() {
        condition.signal()
    }

    /// Wakes every thread waiting in `withLock(when:…)` or `withLock(stepping:)`.
    @inlinable
    public func broadcast() {
        condition.broadcast()
    }
}

/// What one step of ``Locked/withLock(stepping:)`` decided.
public enum LockStep<Result> {
    /// Finished, with this result.
    case done(Result)
    /// Wait until woken (``Locked/signal()``, ``Locked/broadcast()``).
    case wait
    /// Wait until woken or the date.
    case waitUntil(Date)
}
