import LiveCore
import RunStore
import Synchronization

/// Hands the store's commit receipts to one server's loop while that server serves. The store may outlive the
/// server (tests share one; a group's loops share one), so the writer thread must never reach a server that has
/// stopped.
///
/// It holds the server strongly until ``detach()`` (the server's loop has stopped), not weakly: a weak
/// reference gives the server a side table, and then every retain and release of it, several for every fix
/// (each commit reaches the server through it), takes the runtime's slow path: ~8% of a flood's CPU, measured.
final class CommitRelay: Sendable {
    /// The server, until it stops. Written by the loop thread at stop, read by the writer thread and the loop.
    private let server: Mutex<Server?>

    init(_ server: Server) {
        self.server = Mutex(server)
    }

    /// Writer thread: the receipt to the server's loop, if the server still serves.
    func deliver(_ receipt: CommitReceipt) {
        guard let target = server.withLock({ $0 }) else { return }
        // The task holds the relay, not the server: a task left queued when the loop stops keeps nothing alive.
        target.loop.execute { [self] in server.withLock { $0 }?.core.value.committed(receipt) }
    }

    /// The server stopped: later receipts go nowhere.
    func detach() {
        server.withLock { $0 = nil }
    }
}
