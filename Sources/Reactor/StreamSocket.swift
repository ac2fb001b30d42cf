import CEpoll
import Glibc
import Synchronization

/// A connected TCP/IPv4 socket. Owns its descriptor; ``close()`` is idempotent and `deinit` closes.
///
/// Deliberately tiny (one descriptor, one flag and an accepted socket's peer host, 48 bytes on the heap)
/// because the server holds one per connection. Sendable so it can be handed between threads (e.g. a test client), but only
/// one thread should use it at a time.
public final class StreamSocket: Sendable {
    /// The socket descriptor (register it with an ``EventLoop``).
    public let fileDescriptor: Int32
    /// The peer's address without its port, as `accept` gave it (nil for a socket this process connected):
    /// what per-address limits count, known even after the peer reset the connection.
    public let peerHost: HostAddress?
    private let closed = Atomic<Bool>(false)

    /// Takes ownership of a connected socket descriptor.
    init(adopting fileDescriptor: Int32, peerHost: HostAddress? = nil) {
        self.fileDescriptor = fileDescriptor
        self.peerHost = peerHost
    }

    deinit { close() }

    /// False once ``close()`` has been called.
    public var isOpen: Bool { !closed.load(ordering: .acquiring) }

    /// Connects to `host:port` with a *blocking* connect and sets `TCP_NODELAY`. For clients, tests
    /// and benchmarks: the socket stays in blocking mode (see ``setBlocking(_:)``).
    /// A closed port throws `IOError(operation: "connect", errno: ECONNREFUSED)`. `receiveBufferSize` is set
    /// before connecting, so the window the handshake offers is already that small (a client that reads slowly).
    public static func connect(host: String, port: UInt16, receiveBufferSize: Int? = nil) throws(IOError) -> StreamSocket {
        let address = try IPv4Address.make(host: host, port: port)
        let socket = StreamSocket(adopting: try Syscall.tcpSocket(nonBlocking: false))
        if let receiveBufferSize { try socket.setReceiveBufferSize(receiveBufferSize) }
        try Syscall.connect(socket.fileDescriptor, address)
        try Syscall.setSocketOption(socket.fileDescriptor, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
        return socket
    }

    /// Switches between blocking and non-blocking mode (accepted sockets start non-blocking).
    public func setBlocking(_ blocking: Bool) throws(IOError) {
        try checkOpen("fcntl")
        try Syscall.setNonBlocking(fileDescriptor, !blocking)
    }

    /// Sets the kernel's receive buffer (`SO_RCVBUF`; the kernel doubles it for its bookkeeping). A set size
    /// turns the kernel's automatic growth off, so what a sender may have waiting here stays bounded.
    public func setReceiveBufferSize(_ bytes: Int) throws(IOError) {
        try checkOpen("setsockopt")
        try Syscall.setSocketOption(fileDescriptor, SOL_SOCKET, SO_RCVBUF, Int32(clamping: bytes))
    }

    /// Reads up to `buffer.count` bytes. `.processed(0)` is end of file (the peer closed or shut
    /// down its write side); `.wouldBlock` means no data yet. Resets and similar throw.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(IOError) -> IOResult<Int> {
        try checkOpen("read")
        return try Syscall.read(fileDescriptor, into: buffer)
    }

    /// Writes as much of `bytes` as the kernel takes (partial writes are normal on non-blocking
    /// sockets). Uses `MSG_NOSIGNAL`: a closed peer throws `EPIPE` instead of raising SIGPIPE.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(IOError) -> IOResult<Int> {
        try checkOpen("send")
        return try Syscall.send(fileDescriptor, bytes)
    }

    /// Writes as much of the buffers, in order, as the kernel takes, in one system call (a gathering write).
    /// At most 1024 vectors (`IOV_MAX`). Uses `MSG_NOSIGNAL` like ``write(_:)``.
    public func write(vectors: UnsafeBufferPointer<iovec>) throws(IOError) -> IOResult<Int> {
        try checkOpen("sendmsg")
        return try Syscall.send(fileDescriptor, vectors: vectors)
    }

    /// The most vectors one ``write(vectors:)`` takes (Linux's `IOV_MAX`).
    public static let maximumVectors = 1024

    /// Sends FIN after any queued data; reading still works. Errors (e.g. `ENOTCONN`) are ignored:
    /// the connection is then already gone and the next read or write reports it.
    public func shutdownWrite() {
        guard isOpen else { return }
        try? Syscall.shutdown(fileDescriptor, Int32(SHUT_WR))
    }

    /// Shuts down both directions: a thread blocked on this socket (``awaitReadiness(_:timeout:)``) wakes at
    /// once and its next read sees end of file. Any thread may call it (say, to stop a client thread); the
    /// descriptor stays open until ``close()``. Errors are ignored, as for ``shutdownWrite()``.
    public func shutdown() {
        guard isOpen else { return }
        try? Syscall.shutdown(fileDescriptor, Int32(SHUT_RDWR))
    }

    /// Turns TCP keepalive on (`SO_KEEPALIVE`), so that a peer that vanished without a word is found out
    /// eventually even on a connection that only waits.
    public func setKeepAlive() throws(IOError) {
        try checkOpen("setsockopt")
        try Syscall.setSocketOption(fileDescriptor, SOL_SOCKET, SO_KEEPALIVE, 1)
    }

    /// Blocks the calling thread until the socket is readable (`.readable`) or writable (`.writable`), or has
    /// an error or hang-up (the next read or write reports it), at most `timeout` seconds; false when the time
    /// ran out. For a client's own thread on a non-blocking socket, never on an event loop.
    public func awaitReadiness(_ interest: Interest, timeout: Double) throws(IOError) -> Bool {
        try checkOpen("poll")
        var events: Int16 = 0
        if interest.contains(.readable) { events |= Int16(POLLIN) }
        if interest.contains(.writable) { events |= Int16(POLLOUT) }
        let milliseconds = Int32(clamping: Int64((max(0, min(timeout, 86_400)) * 1000).rounded(.up)))
        return try Syscall.poll(fileDescriptor, events: events, timeoutMilliseconds: milliseconds)
    }

    /// Closes the socket; later calls do nothing. Deregister it from its loop first.
    public func close() {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) {
            try? Syscall.close(fileDescriptor)
        }
    }

    /// The peer as `"127.0.0.1:53210"`, for logs; `"closed"` or `"unknown"` when not available.
    /// Asked of the kernel each time, so connections do not carry the string around.
    public var peerDescription: String {
        guard isOpen else { return "closed" }
        guard let address = try? Syscall.socketAddress(fileDescriptor, peer: true) else { return "unknown" }
        return address.description
    }

    /// Using a closed socket is reported as `EBADF` rather than touching a possibly reused fd number.
    private func checkOpen(_ operation: String) throws(IOError) {
        if !isOpen { throw IOError(operation: operation, errno: EBADF) }
    }
}
