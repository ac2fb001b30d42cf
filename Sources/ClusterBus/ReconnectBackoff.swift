import Foundation
/// Delays between connection attempts: ``ClusterBusConfiguration/reconnectInitialDelay``, doubling up to
/// ``ClusterBusConfiguration/reconnectMaximumDelay``, each with ±20 % jitter so that nodes that lost Redis at
/// the same moment do not all come back in step. Owned by one thread.
struct ReconnectBackoff {
    private let initial: Double
    private let maximum: Double
    private var next: Double

    init(initial: Double, maximum: Double) {
        self.initial = max(0.001, initial)
        self.maximum = max(self.initial, maximum)
        next = self.initial
    }

    /// The delay before the next attempt (and the one after doubles).
    mutating func failed() -> Double {
        let delay = next * Double.random(in: 0.8...1.2)
        next = min(maximum, next * 2)
        return min(maximum, delay)
    }

    /// A connection worked: the next failure waits the initial delay again.
    mutating func reset() {
        next = initial
    }
}

/// What the bus tells its owner, for logs and for back-pressure (``ClusterBus`` `onNotice`). Sent from the
/// bus's threads, never from an event loop: the receiver hops where it needs to.
public enum ClusterBusNotice: Sendable {
    /// Which of the bus's connections a notice is about.
    public enum Role: String, Sendable {
        /// The connection that adds entries (`XADD` through the publish script).
        case publisher
        /// The connection that reads (`XREAD BLOCK`).
        case reader
    }

    /// A connection is up (first, or again after a failure: the reader then resumes after the last id it read).
    case connected(Role, RedisEndpoint)
    /// A connection failed or could not be made; the next attempt is in `retryIn` seconds. Sent at each
    /// failed attempt, so a log shows Redis is still down.
    case disconnected(Role, BusError, retryIn: Double)
    /// Redis refused an entry with an error reply (a key of the wrong type, out of memory): it is dropped.
    case refused(stream: String, BusError)
    /// The publish queue was backlogged (past its high-water mark, or full) and is back to its low-water mark.
    case publishQueueDrained
}

extension ClusterBusNotice: CustomStringConvertible {
    /// A log line: "reader connected to redis://…", "publisher lost …; retrying in 0.4 s".
    public var description: String {
        switch self {
        case .connected(let role, let endpoint): "\(role.rawValue) connected to \(endpoint)"
        case .disconnected(let role, let error, let retryIn):
            "\(role.rawValue) disconnected: \(error); retrying in \(String(format: "%.1f", retryIn)) s"
        case .refused(let stream, let error): "Redis refused an entry for \(stream): \(error)"
        case .publishQueueDrained: "the publish queue has room again"
        }
    }
}

/// What a bus has done so far (for `stats:` and the tests).
public struct ClusterBusStatistics: Sendable, Equatable {
    /// Entries Redis has taken (a resent duplicate counts once).
    public var published = 0
    /// The stream entries those were packed into (each packs what one batch had for one stream).
    public var publishedEntries = 0
    /// Entries refused by ``ClusterBus/publish(stream:fields:alsoTo:)`` because the queue was full.
    public var droppedFull = 0
    /// Entries Redis refused (``ClusterBusNotice/refused(stream:_:)``).
    public var refused = 0
    /// Entries waiting or in flight now.
    public var queued = 0
    /// Entries read and given to the callback.
    public var received = 0
    /// The stream entries read (echoes too): what reading costs this node in Redis's terms.
    public var receivedEntries = 0
    /// Entries read that this node had published, dropped.
    public var echoesDropped = 0
    /// Connections made after a failure (publisher and reader).
    public var reconnects = 0
}
