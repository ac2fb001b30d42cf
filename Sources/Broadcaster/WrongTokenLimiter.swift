import Synchronization

/// Wrong device tokens and keys per source address in the current minute (HTTP 429 past the limit). One per
/// server, shared by the loops of a ``ServerGroup`` (a guesser's connections land on every loop), so any loop
/// thread may use it; the table is bounded whatever the traffic.
final class WrongTokenLimiter: Sendable {
    private let failures = Mutex<[String: (count: Int, since: Double)]>([:])
    private let limit: Int

    init(perMinute limit: Int) {
        self.limit = limit
    }

    /// True while `address` has had the limit of wrong tokens within the last minute.
    func isLimited(_ address: String, now: Double) -> Bool {
        failures.withLock { table in
            guard let entry = table[address] else { return false }
            return now - entry.since < 60 && entry.count >= limit
        }
    }

    /// Counts one wrong token from `address`.
    func count(_ address: String, now: Double) {
        failures.withLock { table in
            if table.count > 10_000 { table.removeAll() }
            var entry = table[address] ?? (0, now)
            if now - entry.since >= 60 { entry = (0, now) }
            entry.count += 1
            table[address] = entry
        }
    }
}
