import HTTP
import Reactor
import RunCore
import RunStore
import Wire

/// What one loop of a sharded server tells another (see ``ShardRouter``).
enum RelayMessage: Sendable {
    /// A runner's broadcast event, from the loop that owns the runner (or a cheer from any loop).
    case event(RelayedEvent)
    /// A runner was claimed, started a run, changed its privacy, or its badge history changed at the end of a
    /// run, on the loop that owns it.
    case runner(name: String, keyHash: String, history: BadgeHistory, privacy: RunnerPrivacy)
    /// A share token was issued or revoked on the runner's loop: every loop checks followers' tokens.
    case shares(runner: String, added: ShareToken?, removed: [String])
    /// A device token was issued or revoked on the runner's loop: every loop answers the apps' posts.
    case deviceAdded(DeviceToken)
    case devicesRemoved(hashes: [String])
    /// An inbox drained below its low-water mark: loops that stopped reading fixes for it go on.
    case inboxDrained
    /// A connection moving to the loop that owns the runner it named.
    case adopt(MigratingPeer)
    /// `stats:` on loop `from`: each other loop answers with its own counters.
    case countersWanted(request: Int, from: Int)
    case counters(request: Int, [(String, Int)])
}

/// One broadcast event as the other loops need it: the line to deliver, who hears it, its number, and what a
/// loop keeps of it to show late followers the run so far (``RemoteRun``).
struct RelayedEvent: Sendable {
    /// What the event is, with what a mirror of the run keeps of it.
    enum Kind: Sendable {
        /// `run:`: a run began.
        case started(runID: Int64, started: Double, startHistory: BadgeHistory)
        /// `pace:`, with the figures `runs:`, `badges:` and the overview show for a live run.
        /// `course`: the course the run follows, if any (its place along it is in the line).
        case pace(distance: Double, elapsed: Double, movingTime: Double, rejections: [FixRejection: Int], goal: Double?,
                  course: String? = nil)
        /// `badge:`.
        case badge
        /// `point:` (a course point passed: kept for late followers and the course's passing times).
        case point
        /// A cheer (kept for a late web viewer).
        case cheer
        /// `end:`.
        case ended(runID: Int64)
        /// A phone's alert (`alert:` of kind `sos`, `battery`, `battery_low`): the event's line is what those
        /// without the runner's share token see, `fullLine` what the runner and its share tokens' holders see.
        case deviceAlert(fullLine: [UInt8])
        /// Anything else (`split:`).
        case other
    }

    let runner: String
    let line: [UInt8]
    let audience: Hub.Audience
    let sequence: UInt64
    let kind: Kind
    /// A recovered or taken-over run's story so far, for the mirrors only: its followers heard it already.
    var isCatchUp = false
}

/// A connection on its way to another loop: its socket and everything its ``Peer`` held, so the new loop
/// carries on exactly where the old one stopped. Ownership passes with the message: the old loop has
/// deregistered the socket and never touches it again, hence its unchecked `Sendable`.
struct MigratingPeer: @unchecked Sendable {  // Ownership passes whole: the old loop never touches it again.
    /// What kind of peer it was, with the state of that kind.
    enum Kind {
        /// A socket the listening loop accepted and gives to this loop (round robin), as it came.
        case accepted(http: Bool)
        /// A line-protocol connection and the command that named its runner (handled first on the new loop).
        case line(framer: LineFramer, lineBudget: Double, budgetCheckedAt: Double, follows: Session, command: Command)
        /// An HTTP connection and the request that named its runner (answered first on the new loop).
        case http(parser: HTTPRequestParser, idleSince: Double, request: HTTPRequest)
    }

    let socket: StreamSocket
    /// The id the connection had on the loop it left, kept on the new one (ids are unique in the whole server):
    /// the log follows one connection by one id from `connect` to `disconnect`. Nil for a socket just accepted.
    let id: ConnectionID?
    let output: OutputBuffer
    let hasPeerClosed: Bool
    let connectedAt: Double
    let kind: Kind
}
