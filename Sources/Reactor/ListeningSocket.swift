import CEpoll
import Glibc
import Synchronization

/// A listening TCP/IPv4 socket: non-blocking, close-on-exec, `SO_REUSEADDR`.
///
/// Owns its descriptor and closes it in `deinit`. Sendable: `close()` is atomic and idempotent,
/// though as with any descriptor, closing it while another thread uses it is a logic error.
public final class ListeningSocket: Sendable {
    /// The listening descriptor (register it with an ``EventLoop`` for `.readable`).
    public let fileDescriptor: Int32
    /// The port actually bound (the kernel's choice when 0 was asked for).
    public let port: UInt16
    private let closed = Atomic<Bool>(false)

    /// Binds and listens on `host` (`"127.0.0.1"`, `"0.0.0.0"`, `"localhost"` or another dotted quad)
    /// and `port` (0 = ephemeral).
    public init(host: String, port: UInt16, backlog: Int32 = 4096) throws(IOError) {
        let address = try IPv4Address.make(host: host, port: port)
        let fd = try Syscall.tcpSocket(nonBlocking: true)
        do {
            try Syscall.setSocketOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
            try Syscall.bind(fd, address)
            try Syscall.listen(fd, backlog: backlog)
            self.port = UInt16(bigEndian: try Syscall.localAddress(fd).sin_port)
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
