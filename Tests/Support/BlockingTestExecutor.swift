import Foundation
import Synchronization
import Testing

/// Runs tests that block a thread (sockets, polls, child processes, semaphores) on threads of their own instead of
/// the concurrency pool.
///
/// Why: on a 2-core machine Swift's cooperative pool has 2 threads. Two synchronous tests blocked in `poll` took
/// both, and every async test of the process stood still for half a minute until they ended (CI saw clients
/// "time out waiting for a connection" that had never been given a thread to connect). With this trait a test's
/// task prefers `BlockingTestExecutor.shared`, which never makes a job wait for a thread: a job enqueued while
/// every worker is busy gets a new worker. Child tasks (`async let`, task groups) inherit the preference, so a
/// test blocking one worker while its child runs on another cannot deadlock.
public struct MayBlockTrait: TestTrait, SuiteTrait, TestScoping {
    /// Applies to every test of a suite it is given to.
    public var isRecursive: Bool { true }

    /// Runs each test case (not the suite as a whole) with the blocking executor preferred.
    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard testCase != nil else { return try await function() }
        let slot = SlotHold(BlockingTestSlots.shared)
        await slot.take()
        defer { slot.giveBack() }
        let limit = Self.timeLimit
        // The body and a timer race; the task group is awaited whole before this returns, so the body does not
        // outlive `function` (hence withoutActuallyEscaping is sound).
        try await withoutActuallyEscaping(function) { body in
            try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    try await withTaskExecutorPreference(BlockingTestExecutor.shared) { try await body() }
                    return true
                }
                group.addTask {
                    try? await Task.sleep(for: .seconds(limit))
                    return false
                }
                if try await group.next() == false {
                    // A test that hangs must not hang the run: it fails, is cancelled (the client library's calls
                    // end when cancelled; the other waits have deadlines), and its slot goes to the next test now.
                    Issue.record("ran over its \(Int(limit)) s (MOONRUNNER_TEST_TIME_LIMIT): cancelled")
                    slot.giveBack()
                }
                group.cancelAll()
                while try await group.next() != nil {}
            }
        }
    }

    /// Seconds a blocking test may take: `MOONRUNNER_TEST_TIME_LIMIT`, else 150.
    static let timeLimit: Double = {
        ProcessInfo.processInfo.environment["MOONRUNNER_TEST_TIME_LIMIT"].flatMap(Double.init).flatMap { $0 > 0 ? $0 : nil }
            ?? 150
    }()
}

/// One test's slot, given back once (at the end, or earlier when the test ran over its time).
private final class SlotHold: Sendable {
    private let slots: BlockingTestSlots
    private let held = Mutex(false)

    init(_ slots: BlockingTestSlots) { self.slots = slots }

    func take() async {
        await slots.acquire()
        held.withLock { $0 = true }
    }

    func giveBack() {
        let wasHeld = held.withLock { held -> Bool in
            defer { held = false }
            return held
        }
        if wasHeld { slots.release() }
    }
}

/// How many blocking tests run at once: `MOONRUNNER_TEST_PARALLEL`, else twice the cores.
///
/// Why a limit: swift-testing starts every test at once. Each of these brings a server's loops, clients and
/// child processes, and on 2 cores dozens of them at once starved each other past their deadlines (a 4-second
/// demo that had not ended after 30). Tests waiting for a slot have not started, so their deadlines have not
/// either.
public final class BlockingTestSlots: Sendable {
    /// The slots the blocking tests share.
    public static let shared = BlockingTestSlots(count: {
        if let text = ProcessInfo.processInfo.environment["MOONRUNNER_TEST_PARALLEL"], let count = Int(text), count > 0 {
            return count
        }
        return 2 * max(1, ProcessInfo.processInfo.activeProcessorCount)
    }())

    private struct State {
        var free: Int
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    init(count: Int) {
        state = Mutex(State(free: count))
    }

    /// Waits for a free slot (first come, first served).
    public func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                if state.free > 0 {
                    state.free -= 1
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    /// Gives the slot to the next waiter, or frees it.
    public func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.free += 1
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}

extension Trait where Self == MayBlockTrait {
    /// The suite's (or test's) bodies block threads: run them on threads of their own, never on the pool's.
    public static var mayBlock: Self { MayBlockTrait() }
}

/// A task executor with as many threads as it has jobs running at once: idle workers are reused, and one that
/// stays idle for a few seconds ends.
public final class BlockingTestExecutor: TaskExecutor, @unchecked Sendable {
    /// The one executor the tests share.
    public static let shared = BlockingTestExecutor()

    private struct State {
        var jobs: [UnownedJob] = []
        var idleWorkers = 0
    }

    /// Guards `state`; workers wait on it for jobs. Touched by every enqueuing thread and every worker.
    private let condition = NSCondition()
    private var state = State()

    /// Queues `job` and makes sure a worker is free to run it now.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        state.jobs.append(job)
        let needsWorker = state.idleWorkers < state.jobs.count
        if !needsWorker { condition.signal() }
        condition.unlock()
        if needsWorker { startWorker() }
    }

    private func startWorker() {
        let thread = Thread { [self] in work() }
        thread.stackSize = 8 << 20
        thread.name = "blocking test"
        thread.start()
    }

    private func work() {
        let executor = asUnownedTaskExecutor()
        condition.lock()
        while true {
            if !state.jobs.isEmpty {
                let job = state.jobs.removeFirst()
                condition.unlock()
                job.runSynchronously(on: executor)
                condition.lock()
                continue
            }
            state.idleWorkers += 1
            let woken = condition.wait(until: Date().addingTimeInterval(5))
            state.idleWorkers -= 1
            if !woken && state.jobs.isEmpty { break }
        }
        condition.unlock()
    }
}
