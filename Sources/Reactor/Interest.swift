import CEpoll

/// Which readiness events a registered descriptor wants to hear about.
///
/// An empty interest keeps the descriptor registered but silent (except for errors/hang-ups the
/// kernel always reports) — the usual way to apply back-pressure without deregistering.
public struct Interest: OptionSet, Sendable, Hashable {
    /// The raw bit set.
    public let rawValue: UInt8

    /// Creates an interest from raw bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Data (or a connection to accept, or EOF) is waiting.
    public static let readable = Interest(rawValue: 1 << 0)
    /// The send buffer has room again.
    public static let writable = Interest(rawValue: 1 << 1)

    /// The epoll event mask for this interest. `EPOLLRDHUP` is requested only together with
    /// `EPOLLIN`: with level-triggered epoll a peer half-close would otherwise be reported every turn
    /// to a connection that has paused reading.
    var epollEvents: UInt32 {
        var events: UInt32 = 0
        if contains(.readable) { events |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
        if contains(.writable) { events |= EPOLLOUT.rawValue }
        return events
    }
}

/// Implemented by whoever owns a descriptor registered with an ``EventLoop``.
///
/// Called on the loop thread only. The loop is level-triggered: a condition that is not dealt with
/// (unread data, a hang-up) is reported again on the next turn.
public protocol EventHandler: AnyObject {
    /// One readiness report for the handler's descriptor.
    ///
    /// - `hangup` means `EPOLLHUP`, `EPOLLERR` or `EPOLLRDHUP`. When `readable` is also set, read
    ///   until a read returns 0 (EOF) first: the peer's last bytes may precede its close. After a
    ///   hang-up the handler should deregister and close, or it will be told again next turn.
    func handleEvent(readable: Bool, writable: Bool, hangup: Bool)
}

/// Identifies a timer scheduled on an ``EventLoop``, so it can be cancelled.
public struct TimerID: Sendable, Hashable {
    /// Unique per loop, never reused.
    let rawValue: UInt64
}
