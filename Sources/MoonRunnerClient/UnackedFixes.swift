import Wire

/// The fixes sent (or waiting to be sent) that no `ack:` has covered yet, oldest first.
///
/// An `ack:NAME ts=TS` covers every fix whose timestamp is numerically ≤ TS (compared as numbers, not as
/// text: `9.5` < `10`), so those are dropped; the rest are resent, in order, after a reconnect.
struct UnackedFixes: Sendable {
    private(set) var fixes: [LocationCommand] = []

    /// Fixes still waiting for an ack.
    var count: Int { fixes.count }
    /// True when every fix is acknowledged.
    var isEmpty: Bool { fixes.isEmpty }

    /// Keeps a fix until it is acknowledged.
    mutating func append(_ fix: LocationCommand) {
        fixes.append(fix)
    }

    /// Drops the fixes the ack covers; returns how many. An unreadable timestamp drops nothing.
    @discardableResult
    mutating func acknowledge(_ timestampText: String) -> Int {
        guard let acked = NumberFormat.parseDecimal(timestampText) else { return 0 }
        let before = fixes.count
        fixes.removeAll { $0.timestamp <= acked }
        return before - fixes.count
    }

    /// Forgets every fix (the run ended: resending would start a new one).
    mutating func removeAll() {
        fixes.removeAll()
    }
}
