extension EventLoop {
    /// Delivers `signals` to `body` on the loop thread, via a signalfd. Loop thread only.
    ///
    /// The signals are blocked with `pthread_sigmask` **in the calling thread only**; threads
    /// inherit the mask when they are created. So call this from the main thread *before any other
    /// thread starts* (including the loop thread, if it is not the main one): a thread that has the
    /// signal unblocked would otherwise receive it with its default action (e.g. SIGTERM kills the
    /// process) and the signalfd would never see it. Signals sent to the whole process are then
    /// queued for the signalfd; signals sent to a specific thread reach it only if that is the loop
    /// thread. May be called several times with different signal sets.
    public func onSignal(_ signals: [Int32], _ body: @escaping (Int32) -> Void) throws(IOError) {
        assertLoopThread()
        let set = try Syscall.blockSignals(signals)
        let receiver = SignalReceiver(fileDescriptor: try Syscall.signalFD(set), body: body)
        try register(receiver.fileDescriptor, interest: .readable, handler: receiver)
    }
}

/// Owns a signalfd and hands each signal read from it to a closure.
final class SignalReceiver: EventHandler {
    let fileDescriptor: Int32
    private let body: (Int32) -> Void

    init(fileDescriptor: Int32, body: @escaping (Int32) -> Void) {
        self.fileDescriptor = fileDescriptor
        self.body = body
    }

    deinit { try? Syscall.close(fileDescriptor) }

    func handleEvent(readable: Bool, writable: Bool, hangup: Bool) {
        while true {
            guard case .processed(let signal)? = try? Syscall.readSignal(fileDescriptor) else { return }
            body(signal)
        }
    }
}
