import LiveCore
import Reactor

/// What every client socket of the server has, line protocol and HTTP alike: its id, socket, lifecycle and
/// pending output. The server writes, closes and asks epoll for every peer the same way; the subclasses
/// (``Connection``, ``HTTPConnection``) read and frame. Loop thread only.
class Peer: EventHandler {
    /// Lifecycle of a peer.
    enum State {
        /// Reading and writing.
        case open
        /// Asked to close: no more reading; closes once pending output is written.
        case closing
        /// Gone.
        case closed
    }

    let id: ConnectionID
    let socket: StreamSocket
    /// The server owns every peer and outlives it; `unowned(unsafe)` skips the reference counting that
    /// plain `unowned` costs on every event of every connection.
    unowned(unsafe) let server: ServerCore
    var state = State.open
    /// Why the peer is closing, for the log.
    var closeReason: String?
    var output = OutputBuffer()
    /// What epoll is asked to report for this socket now.
    var interest: Interest = .readable
    /// True while in the server's list of peers to flush at the end of the turn.
    var isQueuedForFlush = false
    /// True once the other side shut its sending half: the peer closes once what it owes is written.
    var hasPeerClosed = false
    /// Set when the peer must go while the hub's effects are carried out (a reader too slow for a broadcast): it
    /// gets nothing more, and the server closes it at the end of the turn, never while carrying effects out.
    var isDoomed = false
    /// Since when the peer has had output it could not write (nil while it keeps up): its backlog's age.
    var backloggedSince: Double?

    init(id: ConnectionID, socket: StreamSocket, server: ServerCore) {
        self.id = id
        self.socket = socket
        self.server = server
    }

    /// Bytes received and held until a whole request is in (an HTTP body of up to a MiB); they count toward the
    /// output budget as pending output does.
    var bufferedInputBytes: Int { 0 }

    /// Since when the peer has held memory waiting on its client: a backlog it does not read, or a request it
    /// is slow to finish sending. The budget closes the oldest first.
    var heldSince: Double? { backloggedSince }

    /// True while an answer is being made off the loop: at end of stream the peer closes only after it.
    var owesAnAnswer: Bool { false }

    /// True when epoll should report readability now (subclasses pause reading for their own reasons).
    var wantsToRead: Bool { state == .open && !hasPeerClosed && !isDoomed }

    /// Bytes the next read may take (the rest waits in the kernel, where TCP pushes back on the sender).
    var readAllowance: Int { Int.max }

    /// Queues one event line for this peer (its `role` says what a slow reader may go without); true when it
    /// replaced a pending pace line or was dropped. The line protocol queues `shared`, the line's one copy for
    /// all recipients; an event stream frames `line` instead.
    func deliver(_ line: [UInt8], shared: SharedLine, as role: LineRole, sequence: UInt64?) -> Bool {
        output.append(shared, as: role, highWaterMark: server.configuration.outputHighWaterMark)
    }

    /// Called once when the peer is closed for good (after it left the server's table).
    func didClose() {}

    func handleEvent(readable: Bool, writable: Bool, hangup: Bool) {}
}
