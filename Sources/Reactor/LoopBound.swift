/// A value that only its event loop's thread may touch, carried through other threads on its way back to the
/// loop (a store read's answer handler, a cluster takeover's continuation), as NIO's `NIOLoopBound`.
///
/// Making one and reading it check the thread (in release builds too), so "this closure only ever runs on its
/// loop" is a trap, not a comment. Before the loop runs, the thread that owns it (the one that will call
/// ``EventLoop/run()``) counts as its thread, as in ``EventLoop/assertLoopThread(_:)``.
public struct LoopBound<Value>: @unchecked Sendable {  // Sendable because every access checks the loop's thread.
    private let bound: Value
    /// The loop whose thread may touch the value.
    public let loop: EventLoop

    /// Binds `value` to `loop`; on the loop's thread only.
    public init(_ value: Value, loop: EventLoop) {
        loop.preconditionLoopThread()
        bound = value
        self.loop = loop
    }

    /// The value; on the loop's thread only.
    public var value: Value {
        loop.preconditionLoopThread()
        return bound
    }
}

extension EventLoop {
    /// Traps unless called on the loop's thread (or, before the loop runs, on any thread: its owner's).
    @inline(__always)
    public func preconditionLoopThread(_ function: StaticString = #function) {
        precondition(runningThread.load(ordering: .relaxed) == 0 || isInLoopThread,
                     "\(function) must be called on the loop thread")
    }
}
