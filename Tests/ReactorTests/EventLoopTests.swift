import Foundation
import Glibc
import Reactor
import Testing

/// The loop driving real loopback sockets; every loop runs on its own thread with a safety timer.
@Suite struct EventLoopTests {
    @Test func echoesThroughTheLoop() async throws {
        let loop = try EventLoop()
        let listener = try ListeningSocket(host: "127.0.0.1", port: 0)
        let acceptor = Acceptor(listener: listener, loop: loop)
        try loop.register(listener.fileDescriptor, interest: .readable, handler: acceptor)
        let message = Array("FIX 1 51.5 -0.12\n".utf8)
        let client = PingClient(
            socket: try StreamSocket.connect(host: "127.0.0.1", port: listener.port),
            loop: loop, message: message
        ) { [unowned loop] _ in loop.stop() }
        try client.start()
        let running = try startLoop(loop)
        #expect(await running.finished())
        #expect(client.received == message)
        #expect(acceptor.accepted == 1)
    }

    @Test func writableFiresOnceTheFullSendBufferDrains() async throws {
        let loop = try EventLoop()
        let listener = try ListeningSocket(host: "127.0.0.1", port: 0)
        let (client, server) = try connectedPair(listener)
        try client.setBlocking(false)
        let chunk = [UInt8](repeating: 0x61, count: 65_536)
        var queued = 0
        fill: while true {
            switch try chunk.withUnsafeBytes({ try server.write($0) }) {
            case .processed(let count): queued += count
            case .wouldBlock: break fill
            }
        }
        #expect(queued > 0)
        let drained = Box(0)
        let drainedWhenWritable = Box(-1)
        let writeAfterWritable = Box<IOResult<Int>?>(nil)
        let reader = Recorder { _ in drained.value += (try? readAvailable(client))?.bytes.count ?? 0 }
        let writer = Recorder { [unowned loop] _ in
            drainedWhenWritable.value = drained.value
            writeAfterWritable.value = try? chunk.withUnsafeBytes { try server.write($0) }
            loop.deregister(server.fileDescriptor)
            loop.deregister(client.fileDescriptor)
            loop.stop()
        }
        try loop.register(server.fileDescriptor, interest: .writable, handler: writer)
        try loop.register(client.fileDescriptor, interest: .readable, handler: reader)
        let running = try startLoop(loop)
        #expect(await running.finished())
        #expect(writer.calls == 1)
        #expect(drainedWhenWritable.value > 0)
        guard case .processed(let count)? = writeAfterWritable.value else {
            Issue.record("write after the writable event should make progress")
            return
        }
        #expect(count > 0)
    }

    @Test func executeFromOtherThreadsRunsOnTheLoopThreadInOrder() async throws {
        let loop = try EventLoop()
        let seen = Box<[[Int]]>([[], []])
        let offLoop = Box(0)
        let running = try startLoop(loop)
        let perProducer = 500
        // Producers on threads of their own: tasks of the shared pool may wait behind other tests' blocking work.
        for producer in 0..<2 {
            Thread.detachNewThread {
                for index in 0..<perProducer {
                    loop.execute {
                        if !loop.isInLoopThread { offLoop.value += 1 }
                        seen.value[producer].append(index)
                        if seen.value[0].count + seen.value[1].count == 2 * perProducer { loop.stop() }
                    }
                }
            }
        }
        #expect(!loop.isInLoopThread)
        #expect(await running.finished())
        #expect(offLoop.value == 0)
        #expect(seen.value[0] == Array(0..<perProducer))
        #expect(seen.value[1] == Array(0..<perProducer))
    }

    @Test func stopFromAnotherThreadEndsAnIdleRun() async throws {
        let loop = try EventLoop()
        // The safety timer stops the loop after 60 s and counts as a failure: `finished()` is true only when
        // `stop()` from this thread ended the idle run. (Generous: on a loaded machine this task itself may
        // wait a long time for a thread of the shared pool; the loop's own timer is what tells.)
        let running = try startLoop(loop, timeout: 60)
        // Wait until the loop has certainly entered run() and gone idle in epoll_wait (a semaphore, not a
        // continuation: it needs no pool thread to wake).
        let idle = DispatchSemaphore(value: 0)
        loop.execute { idle.signal() }
        idle.wait()
        loop.stop()
        #expect(await running.finished())
    }

    @Test func stopBeforeRunMakesRunReturnAfterOneTurn() throws {
        let loop = try EventLoop()
        let ran = Box(false)
        loop.execute { ran.value = true }
        loop.stop()
        loop.run()
        #expect(ran.value)
    }

    @Test func turnPhasesRunInOrderTasksBeforeEventsAndTurnEndHooksEveryTurn() async throws {
        let loop = try EventLoop()
        let listener = try ListeningSocket(host: "127.0.0.1", port: 0)
        let (client, server) = try connectedPair(listener)
        try writeAll(client, [1])
        #expect(wait(for: POLLIN, on: server.fileDescriptor))
        let phases = Box<[String]>([])
        let handler = Recorder { _ in
            _ = try? readAvailable(server)
            phases.value.append("handler")
        }
        try loop.register(server.fileDescriptor, interest: .readable, handler: handler)
        loop.execute { phases.value.append("task") }
        loop.schedule(after: 0) { phases.value.append("timer") }
        let turnEnds = Box(0)
        loop.onTurnEnd { [unowned loop] in
            phases.value.append("end")
            turnEnds.value += 1
            if turnEnds.value == 3 { loop.stop() }
        }
        // Two more turns, each caused by a task queued from the loop thread itself.
        loop.onTurnEnd { [unowned loop] in
            if turnEnds.value < 3 { loop.execute { phases.value.append("task") } }
        }
        let running = try startLoop(loop)
        #expect(await running.finished())
        #expect(phases.value == ["task", "handler", "timer", "end", "task", "end", "task", "end"])
    }

    @Test func handlerDeregisteringItselfGetsNoMoreEvents() async throws {
        let loop = try EventLoop()
        let listener = try ListeningSocket(host: "127.0.0.1", port: 0)
        let (client, server) = try connectedPair(listener)
        try writeAll(client, Array("unread".utf8))
        weak var released: Recorder?
        let calls = Box(0)
        do {
            // Leaves the data unread: level-triggered epoll would report it every turn if still registered.
            let handler = Recorder { [unowned loop] _ in
                calls.value += 1
                loop.deregister(server.fileDescriptor)
            }
            released = handler
            try loop.register(server.fileDescriptor, interest: .readable, handler: handler)
        }
        let ticks = Box(0)
        loop.schedule(every: 0.001) { [unowned loop] in
            ticks.value += 1
            if ticks.value == 20 { loop.stop() }
        }
        let running = try startLoop(loop)
        #expect(await running.finished())
        #expect(calls.value == 1)
        #expect(released == nil)
    }

    @Test func descriptorDeregisteredEarlierInTheBatchGetsNoEvent() async throws {
        let loop = try EventLoop()
        let listener = try ListeningSocket(host: "127.0.0.1", port: 0)
        let pairs = [try connectedPair(listener), try connectedPair(listener)]
        for pair in pairs {
            try writeAll(pair.client, [1])
            #expect(wait(for: POLLIN, on: pair.server.fileDescriptor))  // so both land in one batch
        }
        let calls = Box(0)
        for (index, pair) in pairs.enumerated() {
            let other = pairs[1 - index].server
            let handler = Recorder { [unowned loop] _ in
                calls.value += 1
                loop.deregister(other.fileDescriptor)
                other.close()
                loop.deregister(pair.server.fileDescriptor)
                loop.stop()
            }
            try loop.register(pair.server.fileDescriptor, interest: .readable, handler: handler)
        }
        let running = try startLoop(loop)
        #expect(await running.finished())
        #expect(calls.value == 1)
    }

    @Test func reusedDescriptorDoesNotReceiveTheStaleEvent() async throws {
        // The kernel reuses descriptor numbers; re-registering the same number in the middle of a
        // batch is exactly what a close + accept does. The new handler must not get the old event.
        let loop = try EventLoop()
        let listener = try ListeningSocket(host: "127.0.0.1", port: 0)
        let pairs = [try connectedPair(listener), try connectedPair(listener)]
        for pair in pairs {
            try writeAll(pair.client, [1])
            #expect(wait(for: POLLIN, on: pair.server.fileDescriptor))
        }
        let turn = Box(0)
        loop.onTurnEnd { turn.value += 1 }
        let reRegisteredInTurn = Box(-1)
        let newHandlerFirstTurn = Box(-1)
        let oldHandlerCalls = Box(0)
        let newHandler = Recorder { [unowned loop] recorder in
            if recorder.calls == 1 { newHandlerFirstTurn.value = turn.value }
            loop.stop()
        }
        for (index, pair) in pairs.enumerated() {
            let other = pairs[1 - index].server
            let handler = Recorder { [unowned loop] _ in
                guard reRegisteredInTurn.value < 0 else {
                    oldHandlerCalls.value += 1
                    return
                }
                loop.deregister(pair.server.fileDescriptor)
                loop.deregister(other.fileDescriptor)
                try? loop.register(other.fileDescriptor, interest: .readable, handler: newHandler)
                reRegisteredInTurn.value = turn.value
            }
            try loop.register(pair.server.fileDescriptor, interest: .readable, handler: handler)
        }
        let running = try startLoop(loop)
        #expect(await running.finished())
        #expect(oldHandlerCalls.value == 0)
        #expect(reRegisteredInTurn.value == 0)
        // Level-triggered: the unread byte is reported to the new handler, but only from the next turn.
        #expect(newHandlerFirstTurn.value == 1)
    }

    @Test func setInterestChangesWhatIsReported() async throws {
        let loop = try EventLoop()
        let listener = try ListeningSocket(host: "127.0.0.1", port: 0)
        let (client, server) = try connectedPair(listener)
        defer { client.close() }  // keeps the client alive (and the connection open) until the end
        let writableEvents = Box(0)
        let handler = Recorder { [unowned loop] _ in
            writableEvents.value += 1
            try? loop.setInterest([], for: server.fileDescriptor)  // an idle socket is always writable
        }
        try loop.register(server.fileDescriptor, interest: .writable, handler: handler)
        #expect(loop.interest(for: server.fileDescriptor) == .writable)
        let ticks = Box(0)
        loop.schedule(every: 0.001) { [unowned loop] in
            ticks.value += 1
            if ticks.value == 10 { loop.stop() }
        }
        let running = try startLoop(loop)
        #expect(await running.finished())
        #expect(writableEvents.value == 1)
        #expect(throws: IOError.self) { try loop.setInterest(.readable, for: 9_999) }
    }

    @Test func manySimultaneousConnectionsAreServed() async throws {
        let connections = 1_000
        _ = ProcessLimits.raiseOpenFileLimit(to: 4 * connections + 256)
        let loop = try EventLoop()
        let listener = try ListeningSocket(host: "127.0.0.1", port: 0)
        let acceptor = Acceptor(listener: listener, loop: loop)
        try loop.register(listener.fileDescriptor, interest: .readable, handler: acceptor)
        let running = try startLoop(loop, timeout: 60)
        let residentBefore = ProcessLimits.residentMemoryBytes()
        var clients: [StreamSocket] = []
        for _ in 0..<connections {
            clients.append(try StreamSocket.connect(host: "127.0.0.1", port: listener.port))
        }
        let echoed = Box(0)
        let correct = Box(0)
        let registeredAtEnd = Box(0)
        loop.execute { [clients] in
            for (index, socket) in clients.enumerated() {
                let client = PingClient(socket: socket, loop: loop, message: Array("ping \(index)\n".utf8)) { client in
                    echoed.value += 1
                    if client.received == client.message { correct.value += 1 }
                    if echoed.value == connections {
                        registeredAtEnd.value = loop.registeredCount
                        loop.stop()
                    }
                }
                do { try client.start() } catch { loop.stop() }
            }
        }
        #expect(await running.finished())
        let residentAfter = ProcessLimits.residentMemoryBytes()
        #expect(correct.value == connections)
        #expect(acceptor.accepted == connections)
        // Every client deregistered itself; the listener and the server side of each connection remain.
        #expect(registeredAtEnd.value == connections + 1)
        print("\(connections) connections (both ends in-process): RSS grew \((residentAfter - residentBefore) / 1024) KiB")
    }

    @Test func signalsArriveThroughTheLoop() async throws {
        let loop = try EventLoop()
        let received = Box<[Int32]>([])
        let failure = Box<IOError?>(nil)
        let running = try startLoop(loop)
        loop.execute { [unowned loop] in
            do {
                // Blocks SIGUSR1 in the loop thread only; the signal is then sent to that thread.
                try loop.onSignal([SIGUSR1]) { [unowned loop] signal in
                    received.value.append(signal)
                    loop.stop()
                }
                pthread_kill(pthread_self(), SIGUSR1)
            } catch {
                failure.value = error as? IOError
                loop.stop()
            }
        }
        #expect(await running.finished())
        #expect(failure.value == nil)
        #expect(received.value == [SIGUSR1])
    }
}
