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
