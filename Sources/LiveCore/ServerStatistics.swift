import RunCore

/// Counters for operators, answered by `stats:`. Loop thread only.
public struct ServerStatistics: Sendable, Hashable {
    /// Fixes accepted into runs since start.
    public var fixesAccepted = 0
    /// Fixes filtered out, by reason.
    public var fixesFiltered: [FixRejection: Int] = [:]
    /// Fixes skipped because the run already had them (a resend after a reconnect).
    public var fixesResent = 0
    /// Phone apps' positions older than their run's newest (a queue sent late): stored, and measured in time order.
    public var fixesLate = 0
    /// Event lines queued to clients.
    public var eventsSent = 0
    /// Runs of public runners started since start (anyone may read the counters: private runs are not counted).
    public var runsStarted = 0
    /// Error replies sent.
    public var errorsSent = 0

    /// Creates zeroed counters.
    public init() {}
}

/// The counters of the connections themselves, owned by the server (the hub never sees sockets). Loop thread only.
public struct ConnectionStatistics: Sendable, Hashable {
    /// `pace:` lines replaced by a newer one for a slow client.
    public var eventsConflated = 0
    /// Connections closed for being too slow to read.
    public var slowClientsClosed = 0
    /// Connections accepted since start.
    public var connectionsAccepted = 0
    /// Connections turned away with `err:busy`.
    public var connectionsRefused = 0

    /// Creates zeroed counters.
    public init() {}

    /// As `stats:` names them.
    package var named: [(String, Int)] {
        [("events_conflated", eventsConflated), ("slow_closed", slowClientsClosed),
         ("accepted_total", connectionsAccepted), ("refused_busy", connectionsRefused)]
    }
}
