import Reactor
import Testing

/// Timers are driven by the epoll_wait timeout on the loop thread.
@Suite struct TimerTests {
    @Test func repeatingOneShotAndCancelledTimers() async throws {
        let loop = try EventLoop()
        let events = Box<[String]>([])
        let ticks = Box(0)
        let repeating = Box<TimerID?>(nil)
        let started = ContinuousClock.now
        let finishedAt = Box<ContinuousClock.Instant?>(nil)
        repeating.value = loop.schedule(every: 0.005) { [unowned loop] in
            ticks.value += 1
            guard ticks.value == 5, let id = repeating.value else { return }
            loop.cancel(id)
            loop.schedule(after: 0.02) {
                events.value.append("after-cancel")
                finishedAt.value = ContinuousClock.now
                loop.stop()
            }
        }
        let doomed = loop.schedule(after: 0.001) { events.value.append("doomed") }
        loop.cancel(doomed)
        loop.cancel(doomed)  // harmless twice
        loop.schedule(after: 0.03) { events.value.append("b") }
        loop.schedule(after: 0.01) { events.value.append("a") }
        #expect(loop.scheduledTimerCount == 3)
        let running = try startLoop(loop)
        #expect(await running.finished())
        #expect(events.value == ["a", "b", "after-cancel"])
        #expect(ticks.value == 5)
        let elapsed = try #require(finishedAt.value) - started
        #expect(elapsed >= .milliseconds(45))
    }

    @Test func timerScheduledFromATimerWaitsForItsDeadline() async throws {
        let loop = try EventLoop()
        let order = Box<[Int]>([])
        loop.schedule(after: 0) { [unowned loop] in
            order.value.append(1)
            loop.schedule(after: 0) {
                order.value.append(3)
                loop.stop()
            }
            order.value.append(2)
        }
        let running = try startLoop(loop)
        #expect(await running.finished())
        #expect(order.value == [1, 2, 3])
    }

    @Test func manyCancelledTimersDoNotFire() async throws {
        let loop = try EventLoop()
        let fired = Box(0)
        let ids = (0..<500).map { _ in loop.schedule(after: 0.002) { fired.value += 1 } }
        for id in ids.dropFirst() { loop.cancel(id) }
        loop.schedule(after: 0.01) { [unowned loop] in loop.stop() }
        let running = try startLoop(loop)
        #expect(await running.finished())
        #expect(fired.value == 1)
    }
}
