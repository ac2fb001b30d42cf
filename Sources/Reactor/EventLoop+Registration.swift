import CEpoll
import Glibc

extension EventLoop {
    /// The epoll data word for a registration: generation in the high half, fd in the low half.
    static func token(fd: Int32, generation: UInt32) -> UInt64 {
        UInt64(generation) << 32 | UInt64(UInt32(bitPattern: fd))
    }

    /// Starts watching `fd` for `interest`, delivering events to `handler`. Loop thread only.
    ///
    /// The loop keeps a strong reference to `handler` until ``deregister(_:)``, so a handler that
    /// also holds the loop strongly forms a cycle until then. Throws `EEXIST` if `fd` is already
    /// registered. Always ``deregister(_:)`` a descriptor *before* closing it.
    public func register(_ fd: Int32, interest: Interest, handler: EventHandler) throws(IOError) {
        assertLoopThread()
        precondition(fd >= 0, "register: negative file descriptor")
        lastGeneration &+= 1
        let generation = lastGeneration
        try Syscall.epollControl(
            epollFD, EPOLL_CTL_ADD, fd, events: interest.epollEvents,
            data: Self.token(fd: fd, generation: generation))
        let slot = Int(fd)
        if slot >= registrations.count {
            let newCount = Swift.max(slot + 1, registrations.count * 2, 64)
            registrations.append(contentsOf: repeatElement(nil, count: newCount - registrations.count))
        }
        if registrations[slot] == nil { registeredDescriptors += 1 }
        registrations[slot] = Registration(handler: handler, interest: interest, generation: generation)
    }

    /// Changes what `fd` is watched for. Loop thread only; no system call if nothing changes.
    /// Throws `ENOENT` if `fd` is not registered.
    public func setInterest(_ interest: Interest, for fd: Int32) throws(IOError) {
        assertLoopThread()
        let slot = Int(fd)
        guard fd >= 0, slot < registrations.count, let registration = registrations[slot] else {
            throw IOError(operation: "setInterest", errno: ENOENT)
        }
        if registration.interest == interest { return }
        try Syscall.epollControl(
            epollFD, EPOLL_CTL_MOD, fd, events: interest.epollEvents,
            data: Self.token(fd: fd, generation: registration.generation))
        registrations[slot]?.interest = interest
    }

    /// The interest `fd` is registered with, or `nil` if it is not registered. Loop thread only.
    public func interest(for fd: Int32) -> Interest? {
        assertLoopThread()
        let slot = Int(fd)
        guard fd >= 0, slot < registrations.count else { return nil }
        return registrations[slot]?.interest
    }

    /// Stops watching `fd` and releases its handler. Loop thread only; a no-op if not registered.
    ///
    /// Safe inside any handler, including `fd`'s own: events for `fd` still in the current batch are
    /// dropped. Errors from `epoll_ctl` are ignored (e.g. `EBADF` if the caller already closed `fd`,
    /// in which case the kernel has removed it from the epoll set anyway).
    public func deregister(_ fd: Int32) {
        assertLoopThread()
        let slot = Int(fd)
        guard fd >= 0, slot < registrations.count, registrations[slot] != nil else { return }
        registrations[slot] = nil
        registeredDescriptors -= 1
        try? Syscall.epollControl(epollFD, EPOLL_CTL_DEL, fd, events: 0, data: 0)
    }

    /// How many descriptors are registered (excluding the loop's own wake-up fd). Loop thread only.
    public var registeredCount: Int {
        assertLoopThread()
        return registeredDescriptors
    }
}
