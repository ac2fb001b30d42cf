/// Where a client's connection is in its life.
public enum ConnectionState: Sendable, Hashable {
    /// Made, not connected yet (the first command or `connect()` starts connecting).
    case idle
    /// Opening the streams.
    case connecting
    /// The streams are open; commands flow.
    case connected
    /// The connection was lost (or could not be made); attempt `attempt` starts after `delay` seconds.
    /// `reason` says why, in words for people (e.g. `connection refused`).
    case waitingToReconnect(attempt: Int, delay: Double, reason: String)
    /// Gave up after `ReconnectPolicy.maximumAttempts`, or reconnecting is disabled; the error says why.
    case failed(MoonRunnerClientError)
    /// `close()` was called.
    case closed

    /// True once nothing more will happen (failed or closed).
    public var isFinal: Bool {
        switch self {
        case .failed, .closed: return true
        default: return false
        }
    }
}
