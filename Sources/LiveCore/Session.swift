import Wire

/// Identifies one connection for the life of the server (never reused, unlike file descriptors).
public struct ConnectionID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The number, counting up from 1.
    public let value: Int

    /// Wraps a number.
    public init(_ value: Int) { self.value = value }

    /// `#12`.
    public var description: String { "#\(value)" }

    /// Order of connection.
    public static func < (a: ConnectionID, b: ConnectionID) -> Bool { a.value < b.value }
}

/// The last checkpoint a coach was alerted of for one runner's run.
struct CheckpointMark {
    let runID: Int64
    /// Checkpoints passed (distance / interval, rounded down).
    var passed: Int
    /// Elapsed time at the last one; nil when the coach joined mid-run and did not see it.
    var elapsed: Double?
}

/// What the hub knows about one connection: who it is and what it follows.
package struct Session {
    /// When the connection was accepted.
    package let connectedAt: Double
    /// The source address (without its port), for limits per address.
    var address = "local"
    /// The runner this connection speaks for, once `iam:` succeeded (kept here so a fix needs no name lookup).
    var runner: RunnerEntry?
    /// The claimed name, once `iam:` succeeded.
    package var name: String? { runner?.name }
    /// True once the connection sent one valid command (idle connections are closed).
    var isActive = false
    /// Runners followed with `watch:` (all events).
    var watching: Set<String> = []
    /// Runners followed with `coach:` (run, end and badge events).
    var coaching: Set<String> = []
    /// `watch:*`.
    var watchesEveryone = false
    /// `coach:*`.
    var coachesEveryone = false
    /// `coach:NAME every=M`: the checkpoint interval per runner; `coach:* every=M`: for everyone.
    var checkpointEvery: [String: Double] = [:]
    var everyoneCheckpointEvery: Double?
    /// The last checkpoint alerted per runner.
    var checkpointMarks: [String: CheckpointMark] = [:]
    /// Private runners this connection follows with a share token: the token's hash, per runner.
    var grants: [String: String] = [:]
    /// Wrong keys and share tokens this connection gave (it is closed at the limit).
    var wrongGuesses = 0
    /// True for an HTTP event stream (dropped, not told, when its share token is revoked).
    var isEventStream = false

    /// A session accepted at `connectedAt` from `address`.
    package init(connectedAt: Double, address: String = "local", isEventStream: Bool = false) {
        self.connectedAt = connectedAt
        self.address = address
        self.isEventStream = isEventStream
    }

    /// True when the session follows anything.
    var isSpectator: Bool { watchesEveryone || !watching.isEmpty }
    /// True when the session coaches anything.
    var isCoach: Bool { coachesEveryone || !coaching.isEmpty }
}
