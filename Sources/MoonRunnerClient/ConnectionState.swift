/// Where a client's connection is in its life.
public enum ConnectionState: Sendable, Hashable {
    /// Made, not connected yet (the first command or `connect()` starts connecting).
    case idle
    /// Opening the streams.
    case connecting
    /// The streams are open; commands flow.
    case connected
    /// The connection was lost; attempt `attempt` starts after `delay` seconds.
    case waitingToReconnect(attempt: Int, delay: Double)
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
