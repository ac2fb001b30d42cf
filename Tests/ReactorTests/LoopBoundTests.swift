import Dispatch
import Reactor
import Testing

/// A value bound to a loop goes through another thread and back, and is read only on its loop.
@Suite struct LoopBoundTests {
    @Test func aValueBoundOnTheLoopComesBackToItThroughAnotherThread() async throws {
        let loop = try EventLoop()
        let seen = Box<[String]>([])
        loop.execute { [unowned loop] in
            var local = ["made on the loop"]  // not Sendable-checked: a loop-only closure's state
            let bound = LoopBound({ (word: String) in local.append(word); seen.value = local }, loop: loop)
            DispatchQueue.global().async {
                loop.execute {
                    bound.value("read on the loop")
                    loop.stop()
                }
            }
        }
        let running = try startLoop(loop)
        #expect(await running.finished())
        #expect(seen.value == ["made on the loop", "read on the loop"])
    }

    @Test func readingItOffItsLoopTraps() async {
        await #expect(processExitsWith: .failure) {
            let loop = try EventLoop()
            let handed = Box<LoopBound<Int>?>(nil)
            let ready = DispatchSemaphore(value: 0)
            loop.execute { [unowned loop] in
                handed.value = LoopBound(42, loop: loop)
                ready.signal()
            }
            let running = try startLoop(loop)
            ready.wait()
            _ = handed.value?.value  // this thread is not the loop's: a trap, in release builds too
            _ = running
        }
    }
}
