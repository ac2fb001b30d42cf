/// The cluster bus's one error type: every failure of a connection, every error reply from Redis and every misuse of
/// the bus ends up here, with what was being done when it happened.
public struct BusError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What kind of failure it is; it decides what the bus does next.
    public enum Kind: Sendable, Equatable {
        /// The URL given for Redis is not one the bus understands.
        case badURL
        /// Redis cannot be reached, or the connection broke (I/O, end of file, a timeout, bytes that are not RESP2): the bus reconnects
        /// with backoff; a lease call can be retried.
        case connection
        /// Redis answered with an error reply (`-ERR …`, `-NOSCRIPT …`, `-WRONGTYPE …`): the connection is fine.
        case reply
        /// Redis answered with something the bus did not expect (a protocol or version mismatch).
        case unexpectedReply
        /// The bus or lease was closed.
        case closed
    }

    /// What kind of failure.
    public let kind: Kind
    /// What happened, with context (the command, the server's address, the system's or Redis's own message).
    public let message: String

    /// An error of `kind` saying `message`.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// True for an error reply whose code (its first word) is `code`, e.g. `NOSCRIPT`.
    public func isReply(code: String) -> Bool {
        kind == .reply && message.split(separator: " ").contains { $0 == code }
    }

    public var description: String { message }
}
