import LiveCore
import Synchronization
import Reactor
import Wire

/// One line-protocol client: its line framing and rate budget on top of a ``Peer``. Loop thread only.
final class Connection: Peer {
    var framer: LineFramer
    /// Lines this connection may still send before the rate applies (a token bucket).
    var lineBudget: Double
    var budgetCheckedAt: Double
    /// True while reading is paused because the line budget ran out.
    var isReadPaused = false
    /// Answers for this connection being made elsewhere (a history read off the loop, a commit, a cluster claim,
    /// a slowed wrong key's answer). Its later commands wait in the framer (and reading stops) until all are
    /// sent, so replies go out in command order and `quit:` closes only after them — as Redis holds a blocked
    /// client's next commands. A count, as two may overlap (a claim's cluster answer, then its commit).
    var pendingAnswers = 0
    /// True while an answer is pending (see ``pendingAnswers``).
    var isAwaitingAnswer: Bool { pendingAnswers > 0 }

    /// One answer more is made elsewhere.
    func awaitAnswer() { pendingAnswers += 1 }

    /// One pending answer was sent; true when none is left (the commands that waited may run).
    func answerArrived() -> Bool {
        guard pendingAnswers > 0 else { return false }
        pendingAnswers -= 1
        return pendingAnswers == 0
    }
    /// Errors answered in the current one-second window (flood protection).
    var errorWindowStart: Double = 0
    var errorsInWindow = 0

    init(id: ConnectionID, socket: StreamSocket, server: ServerCore, now: Double) {
        framer = LineFramer(maximumLineLength: server.configuration.maximumLineLength)
        lineBudget = server.configuration.lineBurst
        budgetCheckedAt = now
        super.init(id: id, socket: socket, server: server)
    }

    override func didClose() {
        server.lineConnectionCount -= 1
        server.shard?.router.lineConnections.subtract(1, ordering: .relaxed)
    }

    override var owesAnAnswer: Bool { isAwaitingAnswer }

    /// True while lines wait in the framer for this connection's next turn (it reads no more meanwhile).
    var hasQueuedWork = false
    /// True while the store is backlogged: the connection's lines wait until it has caught up.
    var isWaitingForStore = false

    override var wantsToRead: Bool {
        state == .open && !hasPeerClosed && !isDoomed && !isReadPaused && !isAwaitingAnswer && !hasQueuedWork
            && !isWaitingForStore && framer.bufferedByteCount < server.configuration.readAhead
    }

    /// Up to the read-ahead: a read of the whole kernel buffer would leave most of it waiting in the framer
    /// for later turns, seconds of a flood's fixes ahead of the kernel's in the queue however fast the server.
    override var readAllowance: Int { max(1, server.configuration.readAhead - framer.bufferedByteCount) }

    override func handleEvent(readable: Bool, writable: Bool, hangup: Bool) {
        if hangup && isAwaitingAnswer && state == .open {
            // Both directions are gone: the answer could not be delivered, and epoll would report the hangup
            // on every turn until it came.
            server.closeNow(self, reason: "hung up")
            return
        }
        if writable { server.flush(self) }
        if (readable || hangup) && state == .open { server.read(self) }
    }

    /// Takes one line from the budget; false when the budget is spent (reading pauses).
    func spendLine(now: Double) -> Bool {
        if lineBudget < 1 {
            let rate = server.configuration.linesPerSecond
            lineBudget = min(server.configuration.lineBurst, lineBudget + (now - budgetCheckedAt) * rate)
            budgetCheckedAt = now
            if lineBudget < 1 { return false }
        }
        lineBudget -= 1
        return true
    }

    /// Counts one error reply; true when the connection has earned more than the limit in this second.
    func countError(now: Double) -> Bool {
        if now - errorWindowStart >= 1 {
            errorWindowStart = now
            errorsInWindow = 0
        }
        errorsInWindow += 1
        return errorsInWindow > server.configuration.errorsPerSecond
    }
}
