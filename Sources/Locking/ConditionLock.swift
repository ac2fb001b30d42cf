#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pthread mutex and its condition variable, owned by this object (freed with it), every call's return code
/// checked. Plain pthreads, not Foundation's `NSCondition`: a target that needs a lock (the Reactor) does not
/// pull Foundation in for it, and ThreadSanitizer sees pthreads (unlike futex-based locks).
@usableFromInline
final class ConditionLock {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let condition: UnsafeMutablePointer<pthread_cond_t>

    init() {
        mutex = .allocate(capacity: 1)
        condition = .allocate(capacity: 1)
        Self.check(pthread_mutex_init(mutex, nil), "pthread_mutex_init")
        Self.check(pthread_cond_init(condition, nil), "pthread_cond_init")
    }

    deinit {
        Self.check(pthread_cond_destroy(condition), "pthread_cond_destroy")
        Self.check(pthread_mutex_destroy(mutex), "pthread_mutex_destroy")
        condition.deallocate()
        mutex.deallocate()
    }

    @inlinable func lock() {
        Self.check(pthread_mutex_lock(mutex), "pthread_mutex_lock")
    }

    @inlinable func unlock() {
        Self.check(pthread_mutex_unlock(mutex), "pthread_mutex_unlock")
    }

    /// Waits until woken; the caller holds the lock (released while waiting, held again after).
    @inlinable func wait() {
        Self.check(pthread_cond_wait(condition, mutex), "pthread_cond_wait")
    }

    /// Waits until woken or `deadline`; false when the deadline passed. The caller holds the lock.
    @inlinable func wait(until deadline: Date) -> Bool {
        let seconds = max(0, deadline.timeIntervalSince1970)
        let whole = seconds.rounded(.down)
        // Capped far beyond any wait (Date.distantFuture is 6.3e10 s), so the conversion cannot overflow.
        var time = timespec(tv_sec: Int(min(whole, 1e12)), tv_nsec: Int((seconds - whole) * 1e9))
        let result = pthread_cond_timedwait(condition, mutex, &time)
        if result == ETIMEDOUT { return false }
        Self.check(result, "pthread_cond_timedwait")
        return true
    }

    @inlinable func signal() {
        Self.check(pthread_cond_signal(condition), "pthread_cond_signal")
    }

    @inlinable func broadcast() {
        Self.check(pthread_cond_broadcast(condition), "pthread_cond_broadcast")
    }

    /// A pthread call that failed can only be a misuse or a corrupt lock: nothing sensible is left to do.
    @usableFromInline static func check(_ result: Int32, _ call: StaticString) {
        precondition(result == 0, "\(call) failed: \(result)")
    }
}
