import CEpoll
import Glibc
import Synchronization

/// A listening TCP socket, IPv4 or IPv6: non-blocking, close-on-exec, `SO_REUSEADDR`; on `::` dual-stack (IPv4
/// clients too, as `::ffff:a.b.c.d`).
///
/// Owns its descriptor and closes it in `deinit`. Sendable: `close()` is atomic and idempotent,
/// though as with any descriptor, closing it while another thread uses it is a logic error.
public final class ListeningSocket: Sendable {
    /// The listening descriptor (register it with an ``EventLoop`` for `.readable`).
    public let fileDescriptor: Int32
    /// The port actually bound (the kernel's choice when 0 was asked for).
    public let port: UInt16
    private let closed = Atomic<Bool>(false)

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
    }

    deinit { close() }

    /// Accepts one pending connection as a non-blocking, close-on-exec socket with `TCP_NODELAY`.
    ///
    /// Call it in a loop until `.wouldBlock` when the listener is readable. Errors such as `EMFILE`
    /// (out of descriptors) are thrown; with level-triggered epoll the listener then stays readable,
    /// so the caller should pause accepting (e.g. empty interest plus a retry timer).
    public func accept() throws(IOError) -> IOResult<StreamSocket> {
        switch try Syscall.accept(fileDescriptor) {
        case .wouldBlock:
            return .wouldBlock
        case .processed(let fd):
            let socket = StreamSocket(adopting: fd)
            try Syscall.setSocketOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
            return .processed(socket)
        }
    }

    /// Closes the listener; later calls do nothing. Deregister it from its loop first.
    public func close() {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) {
            try? Syscall.close(fileDescriptor)
        }
    }
}
