import Foundation
import Locking
import Testing

/// `Locked`: one thread at a time in `withLock`, and a waiter wakes when another thread makes its condition true.
@Suite struct LockedTests {
    @Test func concurrentIncrementsAreNotLost() async {
        let counter = Locked(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 { group.addTask { for _ in 0..<10_000 { counter.withLock { $0 += 1 } } } }
        }
        #expect(counter.withLock { $0 } == 80_000)
    }

    @Test func aWaiterWakesWhenTheStateIsReady() {
        let box = Locked<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        let seen = Locked<[Int]?>(nil)
        Thread.detachNewThread {
            let items = box.withLock(when: { $0.count >= 3 }) { items -> [Int] in
                defer { items.removeAll() }
                return items
            }
            seen.withLock { $0 = items }
            done.signal()
        }
        for item in 1...3 {
            box.withLock { $0.append(item) }
            box.signal()
        }
        done.wait()
        #expect(seen.withLock { $0 } == [1, 2, 3])
        #expect(box.withLock { $0.isEmpty })
    }

    @Test func aTimedWaitSaysWhetherTheStateWasReady() {
        let flag = Locked(false)
        let ready = flag.withLock(when: { $0 }, before: Date(timeIntervalSinceNow: 0.05)) { _, ready in ready }
        #expect(!ready, "nobody set it")
        flag.withLock { $0 = true }
        #expect(flag.withLock(when: { $0 }, before: Date(timeIntervalSinceNow: 5)) { _, ready in ready })
    }
}

extension LockedTests {
    /// A stepping wait: a step can wait, wait until a time (and learn it ran out), or finish.
    @Test func aSteppingWaitSeesItsTimeoutAndTheStateChange() {
        let queue = Locked<[Int]>([])
        var steps: [String] = []
        let timedOutFirst = queue.withLock(stepping: { items, timedOut -> LockStep<Bool> in
            steps.append(timedOut ? "timed out" : "looked")
            if timedOut { return .done(true) }
            return items.isEmpty ? .waitUntil(Date(timeIntervalSinceNow: 0.02)) : .done(false)
        })
        #expect(timedOutFirst && steps == ["looked", "timed out"], "\(steps)")
        let done = DispatchSemaphore(value: 0)
        let taken = Locked<[Int]>([])
        Thread.detachNewThread {
            let items = queue.withLock(stepping: { items, _ -> LockStep<[Int]> in
                guard items.count >= 2 else { return .wait }
                defer { items.removeAll() }
                return .done(items)
            })
            taken.withLock { $0 = items }
            done.signal()
        }
        queue.withLock { $0.append(1) }
        queue.broadcast()
        queue.withLock { $0.append(2) }
        queue.broadcast()
        done.wait()
        #expect(taken.withLock { $0 } == [1, 2])
    }
}
