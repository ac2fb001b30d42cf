import Foundation
import Locking

/// Leases in Redis: which node owns a run (issue 15's failover). A lease is a key `lease:NAME` (the prefix is
/// ``keyPrefix``) holding the owner's node name, with a short TTL the owner renews; when the owner dies the
/// key expires and another node may take the run over.
///
/// - take: `SET lease:NAME NODE NX PX ttl` (only if nobody holds it);
/// - renew and release: a Lua script that extends (`PEXPIRE`) or deletes the key only if it still holds this
///   node's name, so a node that lost its lease (it paused longer than the TTL and another node took over)
///   can neither extend nor drop the new owner's.
///
/// Every call blocks on its own connection (made on first use and again after a failure; a call that fails
/// with the connection throws, the next one reconnects): call it from a thread of its own, never from an
/// event loop. Calls from several threads are serialized by a lock.
public final class ClusterLease: Sendable {
    /// Where Redis is.
    public let endpoint: RedisEndpoint
    /// The name written into the leases this node holds.
    public let node: String
    /// Put before a lease's name to make its key.
    public let keyPrefix: String
    private let connectTimeout: Double
    private let commandTimeout: Double
    /// The connection (made on first use) and whether the lease is closed: one call at a time.
    private let link = Locked(Link())

    /// What ``link`` guards.
    private struct Link {
        var connection: RedisConnection?
        var closed = false
    }

    /// Renews a lease if this node holds it: 1 if renewed, 0 if not ours (or gone).
    static let renewScript = """
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
        return 0
        """
    /// Deletes a lease if this node holds it: 1 if deleted, 0 if not ours (or gone).
    static let releaseScript = """
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
        return 0
        """

    /// Leases on the Redis at `url` in `node`'s name; connects on first use.
    public init(url: String, node: String, keyPrefix: String = "lease:", connectTimeout: Double = 2,
                commandTimeout: Double = 5) throws(BusError) {
        endpoint = try RedisEndpoint(url: url)
        guard !node.isEmpty else { throw BusError(.badURL, "a lease needs a node name") }
        self.node = node
        self.keyPrefix = keyPrefix
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
    }

    /// Takes the lease `name` for `ttl` seconds if nobody holds it; true if this node has it now. A lease this
    /// node holds already is not taken again (false): ``renew(_:ttl:)`` it.
    public func take(_ name: String, ttl: Double) throws(BusError) -> Bool {
        let reply = try run(["SET", keyPrefix + name, node, "NX", "PX", Self.milliseconds(ttl)])
        switch reply {
        case .status("OK"): return true
        case .null: return false
        default: throw BusError(.unexpectedReply, "SET \(keyPrefix + name) NX on \(endpoint) answered \(reply)")
        }
    }

    /// Extends the lease `name` to `ttl` seconds from now if this node still holds it; false when it does not
    /// (it expired, or another node took it): the run is no longer this node's.
    public func renew(_ name: String, ttl: Double) throws(BusError) -> Bool {
        try script(Self.renewScript, name, [node, Self.milliseconds(ttl)])
    }

    /// Gives the lease `name` up if this node holds it (a run that ended, a node shutting down cleanly);
    /// false when it was not this node's.
    @discardableResult
    public func release(_ name: String) throws(BusError) -> Bool {
        try script(Self.releaseScript, name, [node])
    }

    /// The node holding the lease `name`, and for how many more seconds; nil when nobody does.
    public func holder(of name: String) throws(BusError) -> (node: String, remaining: Double)? {
        let key = keyPrefix + name
        // GET and PTTL in one round trip; a key expiring between them shows as held with 0 s left.
        let replies = try pipeline([["GET", key], ["PTTL", key]])
        guard case .string(let value) = replies[0] else { return nil }
        guard case .integer(let milliseconds) = replies[1] else {
            throw BusError(.unexpectedReply, "PTTL \(key) on \(endpoint) answered \(replies[1])")
        }
        return (String(decoding: value, as: UTF8.self), Double(max(0, milliseconds)) / 1000)
    }

    /// Closes the connection; later calls throw ``BusError/Kind/closed``.
    public func close() {
        link.withLock { $0 = Link(connection: nil, closed: true) }
    }

    // MARK: Commands

    private func script(_ source: String, _ name: String, _ arguments: [String]) throws(BusError) -> Bool {
        // EVAL with the source each time: Redis caches the compiled script by its SHA1, and a restarted Redis
        // (which has forgotten its scripts) needs nothing special. These are a few calls per run per TTL.
        let reply = try run(["EVAL", source, "1", keyPrefix + name] + arguments)
        guard case .integer(let count) = reply else {
            throw BusError(.unexpectedReply, "the lease script on \(keyPrefix + name) answered \(reply)")
        }
        return count == 1
    }

    private func run(_ words: [String]) throws(BusError) -> RedisValue {
        try pipeline([words])[0]
    }

    /// Sends the commands in one round trip; an error reply throws. A connection failure drops the
    /// connection (the next call makes a new one) and throws.
    private func pipeline(_ commands: [[String]]) throws(BusError) -> [RedisValue] {
        try link.withLock { link throws(BusError) in try pipeline(commands, on: &link) }
    }

    /// ``pipeline(_:)`` under the link's lock.
    private func pipeline(_ commands: [[String]], on link: inout Link) throws(BusError) -> [RedisValue] {
        guard !link.closed else { throw BusError(.closed, "the lease connection to \(endpoint) is closed") }
        do throws(BusError) {
            let redis: RedisConnection
            if let connection = link.connection {
                redis = connection
            } else {
                redis = try RedisConnection(endpoint: endpoint, connectTimeout: connectTimeout, commandTimeout: commandTimeout)
                link.connection = redis
            }
            for command in commands { try redis.append(command.map { Array($0.utf8) }) }
            var replies: [RedisValue] = []
            var failure: BusError?
            for command in commands {
                let reply = try redis.reply()
                if case .error(let message) = reply {
                    failure = failure ?? BusError(.reply, "\(command[0]) \(command.count > 1 ? command[1] : "") on \(endpoint): \(message)")
                }
                replies.append(reply)
            }
            if let failure { throw failure }
            return replies
        } catch {
            if error.kind != .reply { link.connection = nil }
            throw error
        }
    }

    private static func milliseconds(_ seconds: Double) -> String {
        String(max(1, Int((seconds * 1000).rounded())))
    }
}
