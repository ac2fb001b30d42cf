import CEpoll
import Glibc
import Synchronization

/// A listening TCP socket, IPv4 or IPv6: non-blocking, close-on-exec, `SO_REUSEADDR`; on `::` dual-stack (IPv4
/// clients too, as `::ffff:a.b.c.d`).
///
/// Owns its descriptor, and a spare one (see ``acceptToRefuse(_:)``), and closes them in `deinit`. Sendable:
/// `close()` is atomic and idempotent, though as with any descriptor, closing it while another thread uses it
/// is a logic error; one thread at a time accepts.
public final class ListeningSocket: Sendable {
    /// The listening descriptor (register it with an ``EventLoop`` for `.readable`).
    public let fileDescriptor: Int32
    /// The port actually bound (the kernel's choice when 0 was asked for).
    public let port: UInt16
    private let closed = Atomic<Bool>(false)
    /// `/dev/null`, held open only to be given up when the process has no descriptor left, so that a newcomer
    /// can still be accepted and told no (-1 while given up or not to be had).
    private let spare = Atomic<Int32>(-1)

    /// Binds and listens on `host` — a numeric IPv4 (`127.0.0.1`, `0.0.0.0`) or IPv6 (`::1`, `::`, brackets
    /// allowed) address, or `localhost` (127.0.0.1) — and `port` (0 = ephemeral).
    public init(host: String, port: UInt16, backlog: Int32 = 4096) throws(IOError) {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        guard let address = SocketAddress(numericHost: bare == "localhost" ? "127.0.0.1" : bare, port: port) else {
            throw IOError(operation: "parse address \(host) (a numeric IPv4 or IPv6 address, or localhost)", errno: EINVAL)
        }
        let fd = try Syscall.tcpSocket(family: address.family, nonBlocking: true)
        do {
            try Syscall.setSocketOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
            // `::` takes IPv4 clients too (dual-stack), whatever the system's default for IPV6_V6ONLY.
            if address.isIPv6 { try Syscall.setSocketOption(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 0) }
            try Syscall.bind(fd, address)
            try Syscall.listen(fd, backlog: backlog)
            self.port = try Syscall.socketAddress(fd, peer: false).port
        } catch {
            try? Syscall.close(fd)
            throw error
        }
        fileDescriptor = fd
        restoreSpare()
    }

    deinit { close() }

    /// Accepts one pending connection as a non-blocking, close-on-exec socket with `TCP_NODELAY`, its
    /// ``StreamSocket/peerHost`` set.
    ///
    /// Call it in a loop until `.wouldBlock` when the listener is readable. Errors such as `EMFILE`
    /// (out of descriptors) are thrown; with level-triggered epoll the listener then stays readable, so the
    /// caller should refuse the newcomers (``acceptToRefuse(_:)``) or pause accepting (e.g. empty interest plus
    /// a retry timer).
    public func accept() throws(IOError) -> IOResult<StreamSocket> {
        switch try Syscall.accept(fileDescriptor) {
        case .wouldBlock:
            return .wouldBlock
        case .processed(let (fd, address)):
            let socket = StreamSocket(adopting: fd, peerHost: address.map(HostAddress.init))
            try Syscall.setSocketOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
            return .processed(socket)
        }
    }

    /// What ``acceptToRefuse(_:)`` did.
    public enum Refusal: Sendable, Equatable {
        /// A newcomer was accepted on the spare descriptor, handed to the closure and closed.
        case refused
        /// No connection was waiting.
        case nothingWaiting
        /// There was no spare descriptor to give up (it could not be taken back last time): pause accepting
        /// instead, and call ``restoreSpare()`` once descriptors are free again.
        case noSpare
    }

    /// For when ``accept()`` failed with `EMFILE` or `ENFILE` (no descriptor left): gives up the spare
    /// descriptor, accepts the next pending connection in its place, hands it to `refuse` (to say why, in a
    /// write that must not block) and closes it, then takes the spare back. Without this the newcomer would
    /// wait in the backlog, unanswered, until its own client gave up, and the listener would stay readable.
    /// A failed accept (another thread took the freed descriptor first) is thrown, the spare taken back.
    public func acceptToRefuse(_ refuse: (StreamSocket) -> Void) throws(IOError) -> Refusal {
        let held = spare.exchange(-1, ordering: .acquiringAndReleasing)
        guard held >= 0 else { return .noSpare }
        try? Syscall.close(held)  // the descriptor is released even when close reports an error
        defer { restoreSpare() }
        guard case .processed(let socket) = try accept() else { return .nothingWaiting }
        refuse(socket)
        socket.close()
        return .refused
    }

    /// Opens the spare descriptor again if it is not held (after ``acceptToRefuse(_:)`` found none); quiet when
    /// the process still has no descriptor to spare: the next call tries again.
    public func restoreSpare() {
        guard !closed.load(ordering: .acquiring), spare.load(ordering: .acquiring) < 0,
              let fd = try? Syscall.openForReading("/dev/null") else { return }
        if !spare.compareExchange(expected: -1, desired: fd, ordering: .acquiringAndReleasing).exchanged {
            try? Syscall.close(fd)
        }
    }

    /// True while the spare descriptor is held (tests).
    public var holdsSpare: Bool { spare.load(ordering: .acquiring) >= 0 }

    /// Closes the listener and its spare; later calls do nothing. Deregister it from its loop first.
    public func close() {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) {
            try? Syscall.close(fileDescriptor)
            let held = spare.exchange(-1, ordering: .acquiringAndReleasing)
            if held >= 0 { try? Syscall.close(held) }
        }
    }
}
