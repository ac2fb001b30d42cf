import Synchronization

/// Wrong device tokens, runner keys and share tokens in the current minute, per source address and per target
/// (the runner a key or token was tried for). It never stands between anyone and a right answer: the server
/// checks a key or token first and asks here only about a wrong one (the hub for the line protocol, the
/// server for HTTP requests), which is answered at once, later, or
/// refused (see ``Verdict``). One per server, shared by the loops of a ``ServerGroup`` (a guesser's connections
/// land on every loop), so any loop thread may use it; its tables are bounded whatever the traffic.
package final class WrongTokenLimiter: Sendable {
    /// What becomes of the answer to one wrong key or token.
    package enum Verdict: Equatable {
        /// Answered now: under the limit.
        case answer
        /// Answered after this many seconds: the source address (a venue's Wi-Fi may be one) or the target has
        /// had more than the limit this minute; every further wrong one waits longer, up to 5 s.
        case slow(Double)
        /// Refused at once (HTTP 429, `err:wrong_key` and close): the address has had five times the limit.
        case refuse
    }

    private struct Tally {
        var count: Int
        var since: Double
    }

    private struct Tables {
        var addresses: [String: Tally] = [:]
        var targets: [String: Tally] = [:]
    }

    private let tables = Mutex(Tables())
    private let limit: Int
    /// Most addresses and targets remembered each; past it the minute's expired entries go, then all.
    static let capacity = 10_000

    package init(perMinute limit: Int) {
        self.limit = limit
    }

    /// Counts one wrong key or token from `address`, tried for `target` (a runner's name; nil when a token names
    /// nobody), and says what becomes of its answer.
    package func wrong(from address: String, target: String?, now: Double) -> Verdict {
        tables.withLock { tables in
            let fromAddress = Self.count(address, in: &tables.addresses, now: now)
            let forTarget = target.map { Self.count($0, in: &tables.targets, now: now) } ?? 0
            if fromAddress > 5 * limit { return .refuse }
            let over = max(fromAddress, forTarget) - limit
            return over > 0 ? .slow(min(5, 0.25 * Double(over))) : .answer
        }
    }

    /// Adds one to `key`'s tally of this minute; the new count.
    private static func count(_ key: String, in table: inout [String: Tally], now: Double) -> Int {
        if table.count >= capacity, table[key] == nil {
            table = table.filter { now - $0.value.since < 60 }
            if table.count >= capacity { table.removeAll() }
        }
        var tally = table[key] ?? Tally(count: 0, since: now)
        if now - tally.since >= 60 { tally = Tally(count: 0, since: now) }
        tally.count += 1
        table[key] = tally
        return tally.count
    }
}
