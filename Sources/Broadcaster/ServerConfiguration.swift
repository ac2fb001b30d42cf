import RunCore

/// Everything `moonrunner serve` can be told, with the defaults it uses. Each field is a flag of `serve`.
public struct ServerConfiguration: Sendable {
    /// Address to listen on. Default `127.0.0.1`.
    public var host = "127.0.0.1"
    /// TCP port; 0 picks an ephemeral port (tests). Default 4242.
    public var port: UInt16 = 4242
    /// Most connections open at once; a connection past it gets `err:busy` and is closed. Default 20,000.
    public var maximumConnections = 20_000
    /// Seconds a new connection may stay silent (no valid command) before it is closed with `err:idle`. Default 30.
    public var idleTimeout: Double = 30
    /// Sustained lines per second one connection may send; past it the server stops reading from that
    /// connection until the budget refills (TCP back-pressure), so nothing is lost. Default 20,000/s.
    public var linesPerSecond: Double = 20_000
    /// Lines one connection may send at once before the rate applies, so a runner can resend a backlog of
    /// thousands of fixes after a reconnect. Default 50,000.
    public var lineBurst: Double = 50_000
    /// Error replies one connection may earn in one second before it is told `err:flood` and closed. Default 200.
    public var errorsPerSecond = 200
    /// Pending output bytes above which a connection's pending `pace:` lines are conflated per runner. Default 64 KiB.
    public var outputHighWaterMark = 64 * 1024
    /// Pending output bytes above which a connection is closed as too slow. Default 4 MiB.
    public var outputHardLimit = 4 * 1024 * 1024
    /// Bytes written to one connection per loop turn, so one fast reader cannot starve the others. Default 256 KiB.
    public var writeBytesPerTurn = 256 * 1024
    /// Seconds a disconnected runner's run stays open for a reconnect with the key. Default 600 (10 minutes).
    public var resumeWindow: Double = 600
    /// The engine's filter, smoothing and pace settings.
    public var tracker = TrackerConfiguration()
    /// Longest command line in bytes, newline excluded. Default 4096.
    public var maximumLineLength = 4096
    /// Most runners one connection may follow by name with `watch:`/`coach:` (`*` follows everyone). Default 1,000.
    public var maximumFollowedRunners = 1_000
    /// Most runs one `runs:` answer lists. Default 100.
    public var maximumHistoryPage = 100

    /// The defaults above.
    public init() {}
}
