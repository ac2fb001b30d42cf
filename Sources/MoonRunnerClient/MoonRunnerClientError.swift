import Wire

/// The one error type of the client library.
public enum MoonRunnerClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server answered `err:CODE "reason"`.
    case server(code: ErrorCode, reason: String)
    /// Connecting failed and the reconnect policy gave up (or is disabled); the text says what failed last.
    case connectionFailed(String)
    /// The connection dropped while a request that cannot safely be repeated (a cheer) was in flight.
    case connectionLost
    /// The client was closed.
    case closed
    /// Refused before sending: the argument would not make a valid command (e.g. a bad name or coordinate).
    case invalidArgument(String)
    /// `send(_:)` or `stop(save:)` before `join(name:key:)`.
    case notJoined
    /// The calling task was cancelled while the call waited (the client itself carries on; see `close()`).
    case cancelled

    /// The wire error code: the server's, or the closest one for errors found by the client.
    public var code: ErrorCode? {
        switch self {
        case .server(let code, _): return code
        case .invalidArgument: return .badArgument
        case .notJoined: return .notIdentified
        case .connectionFailed, .connectionLost, .closed, .cancelled: return nil
        }
    }

    /// A short explanation for people.
    public var reason: String {
        switch self {
        case .server(_, let reason): return reason
        case .connectionFailed(let why): return "cannot connect: \(why)"
        case .connectionLost: return "the connection was lost before the server answered"
        case .closed: return "the client is closed"
        case .invalidArgument(let why): return why
        case .notJoined: return "join(name:key:) first"
        case .cancelled: return "the task was cancelled"
        }
    }

    /// `code: reason`.
    public var description: String {
        if let code { return "\(code.rawValue): \(reason)" }
        return reason
    }

    /// The client form of a server `err:` line.
    public init(_ event: ErrorEvent) {
        self = .server(code: event.code, reason: event.reason)
    }
}
