import CEpoll
import Glibc

/// Connecting by name, over IPv4 or IPv6: for clients.
extension StreamSocket {
    /// Resolves `host` (see ``AddressResolver``) and connects to its addresses in turn until one answers,
    /// within `timeout` seconds in all (each address gets an equal share of what is left). Blocks: call it
    /// off any event loop. Returns a *non-blocking* socket with `TCP_NODELAY`; throws the last address's
    /// error when none answers (`ETIMEDOUT` for one that did not answer in its share).
    public static func connect(resolving host: String, port: UInt16, timeout: Double) throws(IOError) -> StreamSocket {
        try connect(toFirstOf: try AddressResolver.addresses(host: host, port: port), timeout: timeout)
    }

    /// Connects to `addresses` in turn until one answers (see ``connect(resolving:port:timeout:)``).
    public static func connect(toFirstOf addresses: [SocketAddress], timeout: Double) throws(IOError) -> StreamSocket {
        let deadline = Syscall.monotonicNanoseconds() &+ UInt64(max(0, min(timeout, 86_400)) * 1e9)
        var lastError = IOError(operation: "connect: no address", errno: EADDRNOTAVAIL)
        for (index, address) in addresses.enumerated() {
            let now = Syscall.monotonicNanoseconds()
            guard now < deadline else {
                lastError = IOError(operation: "connect", errno: ETIMEDOUT)
                break
            }
            let share = (deadline - now) / UInt64(addresses.count - index)
            let milliseconds = Int32(clamping: max(1, share / 1_000_000))
            do throws(IOError) {
                let socket = StreamSocket(adopting: try Syscall.tcpSocket(family: address.family, nonBlocking: true))
                try Syscall.connect(socket.fileDescriptor, address, timeoutMilliseconds: milliseconds)
                try Syscall.setSocketOption(socket.fileDescriptor, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
                return socket
            } catch {
                lastError = error
            }
        }
        throw lastError
    }
}
