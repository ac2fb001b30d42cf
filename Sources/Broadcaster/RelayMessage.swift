import LiveCore
import HTTP
import Reactor
import RunCore
import RunStore
import Wire

/// What one loop of a sharded server tells another (see ``ShardRouter``): the hub's news, and what only the
/// loops themselves deal in.
enum RelayMessage: Sendable {
    /// What a hub tells the other loops (and, in a cluster, the other nodes).
    case news(HubNews)
    /// An inbox drained below its low-water mark: loops that stopped reading fixes for it go on.
    case inboxDrained
    /// A connection moving to the loop that owns the runner it named.
    case adopt(MigratingPeer)
    /// `stats:` on loop `from`: each other loop answers with its own counters.
    case countersWanted(request: Int, from: Int)
    case counters(request: Int, [(String, Int)])
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
