import Foundation

/// How a `MoonRunnerClient` connects and reconnects. Every field has a documented default.
public struct ClientConfiguration: Sendable, Hashable {
    /// Server address: a host name (`race.example.org`, `localhost`) or a numeric IPv4 or IPv6 address (`::1`,
    /// brackets allowed). A name is resolved at each connection attempt, off the I/O thread, and its addresses
    /// are tried in turn until one answers. Default `127.0.0.1`.
    public var host: String
    /// Server TCP port. Default 4242, the server's default.
    public var port: UInt16
    /// When and how often to reconnect after the server drops the connection.
    public var reconnect: ReconnectPolicy
    /// Longest server line accepted; longer ones are skipped. Default 4096 (the protocol's limit) × 4,
    /// leaving room for servers that add fields.
    public var maximumLineLength: Int
    /// Seconds a connection attempt — resolving the name and connecting to its addresses, each getting an
    /// equal share of what is left — may take before it counts as failed (and the reconnect policy decides
    /// what next). Default 10: a phone on a poor network needs a few, a server that is not there would
    /// otherwise hold an attempt for the kernel's two minutes.
    public var connectTimeout: Double

    /// Creates a configuration.
    public init(host: String = "127.0.0.1", port: UInt16 = 4242, reconnect: ReconnectPolicy = ReconnectPolicy(),
                maximumLineLength: Int = 16_384, connectTimeout: Double = 10) {
        self.host = host
        self.port = port
        self.reconnect = reconnect
        self.maximumLineLength = maximumLineLength
        self.connectTimeout = connectTimeout
    }
}

/// Exponential backoff with jitter between reconnection attempts.
///
/// Attempt *n* (from 1) waits `min(maximumDelay, initialDelay × multiplier^(n−1))`, then scaled by a random
/// factor in `1 − jitter ... 1 + jitter` so a crowd of phones does not reconnect in lockstep after a server
/// restart. The attempt count resets once a connection delivers a line.
public struct ReconnectPolicy: Sendable, Hashable {
    /// Reconnect at all. Default true.
    public var isEnabled: Bool
    /// Delay before the first attempt, seconds. Default 0.2.
    public var initialDelay: Double
    /// Factor between consecutive delays. Default 2.
    public var multiplier: Double
    /// Longest delay, seconds. Default 5.
    public var maximumDelay: Double
    /// Relative random spread of each delay, 0...1. Default 0.2 (±20 %).
    public var jitter: Double
    /// Consecutive failed attempts before giving up (`ConnectionState.failed`); nil retries forever (default).
    public var maximumAttempts: Int?

    /// Creates a policy.
    public init(isEnabled: Bool = true, initialDelay: Double = 0.2, multiplier: Double = 2, maximumDelay: Double = 5,
                jitter: Double = 0.2, maximumAttempts: Int? = nil) {
        self.isEnabled = isEnabled
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maximumDelay = maximumDelay
        self.jitter = jitter
        self.maximumAttempts = maximumAttempts
    }

    /// The delay before attempt `attempt` (1 for the first), before jitter.
    public func baseDelay(attempt: Int) -> Double {
        let exponent = Double(max(0, attempt - 1))
        return min(maximumDelay, initialDelay * pow(multiplier, exponent))
    }

    /// The delay before attempt `attempt` with jitter drawn from `generator`.
    public func delay<G: RandomNumberGenerator>(attempt: Int, using generator: inout G) -> Double {
        let base = baseDelay(attempt: attempt)
        let spread = min(max(jitter, 0), 1)
        guard spread > 0 else { return base }
        return base * Double.random(in: (1 - spread)...(1 + spread), using: &generator)
    }
}
