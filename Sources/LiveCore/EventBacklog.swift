/// The newest broadcast events about one runner, numbered, so an event stream that reconnects with
/// `Last-Event-ID` gets exactly what it missed while the gap is still held here. A ring of fixed capacity:
/// memory per runner is bounded whatever the run's length. Loop thread only (inside the hub).
package struct EventBacklog {
    /// One remembered event.
    package struct Entry {
        package let sequence: UInt64
        package let line: [UInt8]
        /// What the event is to a reader's queue (its runner, and whether it is a droppable position).
        package let role: LineRole
    }

    private var entries: [Entry] = []
    private var start = 0
    let capacity: Int
    /// The newest sequence number no longer held (0 when nothing was dropped yet).
    private(set) var droppedThrough: UInt64 = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Remembers an event, forgetting the oldest when full.
    mutating func append(_ sequence: UInt64, _ line: [UInt8], as role: LineRole) {
        let entry = Entry(sequence: sequence, line: line, role: role)
        if entries.count < capacity {
            entries.append(entry)
        } else {
            droppedThrough = entries[start].sequence
            entries[start] = entry
            start = (start + 1) % capacity
        }
    }

    /// The events after `sequence`, oldest first; nil when some of them are no longer held.
    func events(after sequence: UInt64) -> [Entry]? {
        guard sequence >= droppedThrough else { return nil }
        var result: [Entry] = []
        for offset in 0..<entries.count {
            let entry = entries[(start + offset) % entries.count]
            if entry.sequence > sequence { result.append(entry) }
        }
        return result
    }
}
