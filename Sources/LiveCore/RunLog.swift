import RunCore

/// Every fix stored for one run, in time order: a run fed by a phone app that was offline gets its positions
/// late and in any order (a queue sent oldest first after a gap, or newest first), and its figures must be
/// those of its positions measured in time order. The live engine measures fixes as they come; when one comes
/// older than the run's newest, the run is measured again from here (``Hub/remeasure(_:now:)``).
///
/// Bounded: at most ``capacity`` fixes (about 14 hours at one a second); past it a late fix is filtered
/// `out_of_order`, as over TCP.
struct RunLog {
    /// One stored fix: as received, when, under which sequence, and the filter's verdict as stored.
    package struct Entry {
        var fix: Fix
        var received: Double
        var sequence: Int64
        var rejection: FixRejection?
    }

    /// The most fixes kept for one run.
    static let capacity = 50_000

    /// The fixes, by timestamp (ties in arrival order).
    private(set) var entries: [Entry] = []

    /// True when no more fixes fit.
    var isFull: Bool { entries.count >= Self.capacity }

    /// The newest timestamp stored.
    var newestTimestamp: Double? { entries.last?.fix.timestamp }

    /// The entry stored with exactly this timestamp, if any (a resend).
    func entry(at timestamp: Double) -> Entry? {
        index(at: timestamp).map { entries[$0] }
    }

    /// The index of the entry stored with exactly this timestamp.
    func index(at timestamp: Double) -> Int? {
        let index = insertionIndex(of: timestamp)
        guard index > 0, entries[index - 1].fix.timestamp == timestamp else { return nil }
        return index - 1
    }

    /// The filter's verdict on entry `index` as now stored.
    mutating func setRejection(_ rejection: FixRejection?, at index: Int) {
        entries[index].rejection = rejection
    }

    /// Adds a stored fix in its place by time (no-op when full).
    mutating func insert(_ entry: Entry) {
        guard !isFull else { return }
        let index = insertionIndex(of: entry.fix.timestamp)
        if index == entries.count { entries.append(entry) } else { entries.insert(entry, at: index) }
    }

    /// The first index whose timestamp is above `timestamp` (fixes mostly come in order: checked at the end first).
    private func insertionIndex(of timestamp: Double) -> Int {
        if let last = entries.last, last.fix.timestamp <= timestamp { return entries.count }
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].fix.timestamp <= timestamp { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
