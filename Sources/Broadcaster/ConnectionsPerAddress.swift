import LiveCore
import Reactor
import Synchronization

/// Open connections per source address, line protocol and HTTP together, against
/// ``ServerConfiguration/maximumConnectionsPerAddress``. One per server, shared by the loops of a
/// ``ServerGroup``: the first loop counts a newcomer as it accepts it, and whichever loop finally closes it
/// (connections move between loops) gives its place back, so any loop thread may use it. The table holds
/// only addresses with a connection open, so it is bounded by the connection limits.
final class ConnectionsPerAddress: Sendable {
    /// The cap; nil counts nothing.
    let limit: Int?
    /// Whether loopback addresses are counted (see ``ServerConfiguration/capsLoopbackPerAddress``).
    let countsLoopback: Bool
    private let open = Mutex<[HostAddress: Int]>([:])

    init(limit: Int?, countsLoopback: Bool) {
        self.limit = limit
        self.countsLoopback = countsLoopback
    }

    /// Counts a newcomer from `host`; false, counting nothing, when the address already has `limit` open.
    /// A socket without a known peer (not an accepted one) always passes, uncounted.
    func admit(_ host: HostAddress?) -> Bool {
        guard let limit, let host, countsLoopback || !host.isLoopback else { return true }
        return open.withLock { table in
            let count = table[host, default: 0]
            guard count < limit else { return false }
            table[host] = count + 1
            return true
        }
    }

    /// Gives back the place of a connection from `host` that ``admit(_:)`` counted, once it is closed.
    func release(_ host: HostAddress?) {
        guard limit != nil, let host, countsLoopback || !host.isLoopback else { return }
        open.withLock { table in
            guard let count = table[host] else { return }
            table[host] = count > 1 ? count - 1 : nil
        }
    }

    /// Connections counted from `host` now.
    func count(from host: HostAddress) -> Int {
        open.withLock { $0[host, default: 0] }
    }
}
