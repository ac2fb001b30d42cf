import Glibc

/// The one error type of the Reactor layer: a failed system call and the `errno` it left behind.
///
/// Would-block is deliberately *not* an error (see ``IOResult``), so every `IOError` is a real
/// failure the caller must act on (usually by closing the connection).
public struct IOError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The system call (or logical operation) that failed, e.g. `"read"`, `"connect"`.
    public var operation: String
    /// The `errno` value reported by the kernel, e.g. `ECONNRESET`.
    public var errno: Int32

    /// Creates an error for `operation` failing with `errno`.
    public init(operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }

    /// True for `EMFILE` (the process's open-file limit) and `ENFILE` (the system's): nothing is wrong with the
    /// socket, the process has no descriptor left for a new one.
    public var isOutOfDescriptors: Bool { errno == EMFILE || errno == ENFILE }

    /// A log-friendly rendering such as `"read: Connection reset by peer (errno 104)"`.
    public var description: String {
        "\(operation): \(String(cString: strerror(errno))) (errno \(errno))"
    }
}

/// The outcome of a non-blocking operation: either it did some work, or the kernel said "try later".
///
/// Modelled on SwiftNIO's `IOResult`: `EAGAIN`/`EWOULDBLOCK` is an everyday event on a non-blocking
/// socket, so it is a value the caller switches over rather than an error it has to catch.
public enum IOResult<Value> {
    /// The operation completed; for reads and writes the value is the byte count (`0` from a read = EOF).
    case processed(Value)
    /// The operation would have blocked; wait for the matching readiness event and retry.
    case wouldBlock
}

/// An `IOResult` can cross threads whenever its payload can.
extension IOResult: Sendable where Value: Sendable {}

/// Results compare equal when both would block or both processed equal values (handy in tests).
extension IOResult: Equatable where Value: Equatable {}
