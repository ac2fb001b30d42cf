import CEpoll
import Glibc
import Synchronization

/// A single-threaded, level-triggered epoll event loop (in the spirit of Redis' `ae.c`).
///
/// **Threading.** The loop is owned by the thread that calls ``run()`` (the *loop thread*). Other
/// threads reach it only through ``execute(_:)`` and ``stop()``, which go through a locked queue and
/// an eventfd wake-up. Every other member is loop-thread only — with one allowance: *before*
/// ``run()`` is first entered, the thread that created the loop may configure it (register
/// descriptors, schedule timers, add hooks and signal handlers), provided it hands the loop to the
/// running thread with a happens-before edge (starting that thread is one).
///
/// **A turn** is: `epoll_wait` (timeout = next timer deadline) → event handlers → queued tasks →
/// expired timers → turn-end hooks → stop check.
///
/// **Memory.** Per registered descriptor the loop keeps one 16-byte slot in an array indexed by fd
/// (handler reference, interest, generation), so 10,000 connections cost ~160 KiB of loop state.
public final class EventLoop: @unchecked Sendable {  // `shared` is locked; the rest is the loop thread's (asserted).
    /// Where the loop is in its life; guarded by `shared`.
    enum Lifecycle {
        /// Not inside `run()`.
        case idle
        /// Inside `run()`.
        case running
        /// `stop()` was called; `run()` returns at the end of the current (or next) turn.
        case stopRequested
    }

    /// State shared with other threads; only ever touched inside `shared.withLock`.
    struct SharedState {
        var tasks: [@Sendable () -> Void] = []
        /// True once the eventfd was written for the queued tasks, so a burst of `execute` calls
        /// costs one `write` instead of one each.
        var wakeupPending = false
        var lifecycle = Lifecycle.idle
    }

    /// One registered descriptor. `generation` is unique per `register` call and travels in the
    /// epoll event, so an event for a descriptor deregistered (and perhaps reused by the kernel for a
    /// new registration) earlier in the same batch is recognised as stale and dropped.
    struct Registration {
        let handler: EventHandler
        var interest: Interest
        let generation: UInt32
    }

    /// epoll data value marking the wake-up eventfd (a real token never has fd bits all ones).
    static let wakeupToken = UInt64.max
    /// How many events one `epoll_wait` may return.
    static let eventBatchSize: Int32 = 1024

    // MARK: Any thread (immutable, or synchronised)

    /// The epoll instance; immutable after init.
    let epollFD: Int32
    /// Eventfd that other threads write to wake `epoll_wait`; immutable after init.
    let wakeupFD: Int32
    /// Cross-thread task queue and lifecycle.
    let shared = Mutex(SharedState())
    /// `pthread_self()` of the thread inside `run()`, or 0; read by `isInLoopThread` from any thread.
    let runningThread = Atomic<UInt>(0)

    // MARK: Loop thread only

    /// Registrations indexed by file descriptor.
    var registrations: [Registration?] = []
    /// How many slots of `registrations` are occupied.
    var registeredDescriptors = 0
    /// Source of registration generations (wraps; 2^32 registrations apart never collide in a batch).
    var lastGeneration: UInt32 = 0
    /// Buffer `epoll_wait` fills; allocated once.
    let events: UnsafeMutablePointer<epoll_event>
    /// Pending timers.
    var timers = TimerQueue()
    /// Called at the end of every turn, in the order added.
    var turnEndHooks: [() -> Void] = []
    /// When the current turn's work began (monotonic nanoseconds). Loop thread only.
    var turnStartedNanoseconds: UInt64 = 0
    /// Second task buffer, swapped with the shared one each turn so neither reallocates.
    var runnableTasks: [@Sendable () -> Void] = []

    /// Creates the epoll instance and its wake-up eventfd.
    public init() throws(IOError) {
        epollFD = try Syscall.epollCreate()
        do {
            wakeupFD = try Syscall.eventFD()
        } catch {
            try? Syscall.close(epollFD)
            throw error
        }
        events = .allocate(capacity: Int(Self.eventBatchSize))
        do {
            try Syscall.epollControl(epollFD, EPOLL_CTL_ADD, wakeupFD, events: EPOLLIN.rawValue, data: Self.wakeupToken)
        } catch {
            events.deallocate()
            try? Syscall.close(wakeupFD)
            try? Syscall.close(epollFD)
            throw error
        }
    }

    deinit {
        // Registered handlers are released with `registrations`; they close their own descriptors.
        events.deallocate()
        try? Syscall.close(wakeupFD)
        try? Syscall.close(epollFD)
    }

    // MARK: Cross-thread API

    /// True when called from the thread currently inside ``run()``.
    public var isInLoopThread: Bool {
        runningThread.load(ordering: .acquiring) == UInt(pthread_self())
    }

    /// Queues `task` to run on the loop thread during the next turn. Any thread; FIFO across calls.
    ///
    /// Tasks queued while the loop is not running wait for the next ``run()``; tasks still queued
    /// when the loop is deinitialised are dropped.
    public func execute(_ task: @escaping @Sendable () -> Void) {
        let needsWakeup = shared.withLock { state in
            state.tasks.append(task)
            if state.wakeupPending { return false }
            state.wakeupPending = true
            return true
        }
        if needsWakeup { wakeUp() }
    }

    /// Asks ``run()`` to return after the current turn. Any thread.
    ///
    /// Sticky: if the loop is not running yet, the next ``run()`` performs one turn and returns.
    public func stop() {
        shared.withLock { $0.lifecycle = .stopRequested }
        wakeUp()
    }

    private func wakeUp() {
        // Can only fail if the counter is saturated (already awake) or the loop is gone: ignore.
        _ = try? Syscall.signalEventFD(wakeupFD)
    }

    // MARK: Running

    /// Runs turns on the calling thread until ``stop()``; that thread becomes the loop thread.
    ///
    /// Returns after the turn in which `stop()` was observed; the loop may be run again later.
    /// An `epoll_wait` failure other than `EINTR` means the loop's own descriptors are broken and is fatal.
    public func run() {
        let me = UInt(pthread_self())
        let (claimed, _) = runningThread.compareExchange(expected: 0, desired: me, ordering: .acquiringAndReleasing)
        precondition(claimed, "EventLoop.run() called while already running")
        shared.withLock { state in
            if state.lifecycle == .idle { state.lifecycle = .running }
        }
        defer {
            shared.withLock { $0.lifecycle = .idle }
            runningThread.store(0, ordering: .releasing)
        }
        while true {
            runTurn()
            let stopping = shared.withLock { $0.lifecycle == .stopRequested }
            if stopping { return }
        }
    }

    /// One turn: wait, tasks, dispatch, timers, hooks. Tasks come before the descriptors' events, so what
    /// another thread queued before a client's bytes arrived is done before those bytes are read (a reply on
    /// one loop, then the client's next line on another, finds the first loop's news already there).
    private func runTurn() {
        let count: Int
        do {
            count = try Syscall.epollWait(
                epollFD, events, capacity: Self.eventBatchSize,
                timeoutMilliseconds: timers.timeoutMilliseconds(now: Syscall.monotonicNanoseconds()))
        } catch {
            fatalError("EventLoop: \(error)")
        }
        turnStartedNanoseconds = Syscall.monotonicNanoseconds()
        // The wake-up counter is drained before the tasks are taken: a task queued after that wakes the next
        // epoll_wait again, so none is left waiting.
        for index in 0..<count where events[index].data.u64 == Self.wakeupToken {
            _ = try? Syscall.drainEventFD(wakeupFD)
        }
        runQueuedTasks()
        dispatchEvents(count)
        runExpiredTimers()
        runTurnEndHooks()
    }

    private func dispatchEvents(_ count: Int) {
        let hangupMask = EPOLLHUP.rawValue | EPOLLERR.rawValue | EPOLLRDHUP.rawValue
        for index in 0..<count {
            let event = events[index]
            let token = event.data.u64
            if token == Self.wakeupToken { continue }
            let fd = Int(UInt32(truncatingIfNeeded: token))
            // Re-checked per event: an earlier handler in this batch may have deregistered this fd.
            guard fd < registrations.count, let registration = registrations[fd],
                registration.generation == UInt32(truncatingIfNeeded: token >> 32)
            else { continue }
            let flags = event.events
            // Mask with the current interest: an earlier handler may have narrowed it this turn.
            let readable = flags & EPOLLIN.rawValue != 0 && registration.interest.contains(.readable)
            let writable = flags & EPOLLOUT.rawValue != 0 && registration.interest.contains(.writable)
            let hangup = flags & hangupMask != 0
            guard readable || writable || hangup else { continue }
            // `registration` holds a strong reference, so the handler survives deregistering itself.
            registration.handler.handleEvent(readable: readable, writable: writable, hangup: hangup)
        }
    }

    private func runQueuedTasks() {
        shared.withLock { state in
            state.wakeupPending = false
            swap(&state.tasks, &runnableTasks)
        }
        guard !runnableTasks.isEmpty else { return }
        for task in runnableTasks { task() }
        runnableTasks.removeAll(keepingCapacity: true)
    }

    private func runTurnEndHooks() {
        // Index loop over a count snapshot: a hook may add hooks (they start next turn).
        let count = turnEndHooks.count
        for index in 0..<count { turnEndHooks[index]() }
    }

    /// Asserts the loop-thread rule (debug builds only); configuration before `run()` is allowed. Public so
    /// the code that runs on a loop (the server's hub and connections) checks it at every entry.
    @inline(__always)
    public func assertLoopThread(_ function: StaticString = #function) {
        assert(runningThread.load(ordering: .relaxed) == 0 || isInLoopThread, "\(function) must be called on the loop thread")
    }

    // MARK: Hooks

    /// Adds `body` to be called once at the end of every turn (e.g. to flush output buffers).
    /// Loop thread only. Hooks cannot be removed; make the body cheap when idle.
    /// Nanoseconds the current turn has been working (since `epoll_wait` returned): a turn-end hook measures
    /// the turn with it. Loop thread only.
    public var currentTurnNanoseconds: UInt64 {
        Syscall.monotonicNanoseconds() &- turnStartedNanoseconds
    }

    public func onTurnEnd(_ body: @escaping () -> Void) {
        assertLoopThread()
        turnEndHooks.append(body)
    }
}
