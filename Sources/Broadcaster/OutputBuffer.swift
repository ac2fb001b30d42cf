/// The bytes waiting to be written to one connection, with per-runner conflation of `pace:` lines.
///
/// Below the high-water mark every line is queued in order, and so is everything while the socket keeps up (a
/// burst made in one loop turn is not a slow reader). Once a write left bytes behind and the queue is above the
/// mark, a `pace:` line does not queue: it
/// replaces the runner's pending pace line (a spectator only needs the newest position). Any other line about
/// that runner first moves the runner's pending pace line into the queue, so order per runner is kept and a
/// stale position never arrives after `end:`. Owned by one connection; loop thread only.
struct OutputBuffer {
    /// Queued bytes; those before `readIndex` are already written.
    private var queue: [UInt8] = []
    private var readIndex = 0
    /// The newest pending pace line per runner, waiting for the queue to drain.
    private var latestPace: [String: [UInt8]] = [:]
    /// Runners in the order their pace lines were first conflated (entries may be stale: checked on refill).
    private var paceOrder: [String] = []
    private var conflatedBytes = 0
    /// True when the last write could not take everything: the reader is behind.
    private(set) var isCongested = false

    /// Bytes waiting, queued and conflated.
    var pendingBytes: Int { queue.count - readIndex + conflatedBytes }

    /// True when nothing waits.
    var isEmpty: Bool { pendingBytes == 0 }

    /// Queues a line (with its newline). `paceOf` names the runner when the line is a droppable `pace:` line.
    /// Returns true when the line replaced an older pending pace line (one event conflated).
    @discardableResult
    mutating func append(_ line: [UInt8], paceOf runner: String?, highWaterMark: Int) -> Bool {
        if let runner {
            if isCongested && queue.count - readIndex >= highWaterMark {
                let replaced = latestPace.updateValue(line, forKey: runner)
                if let replaced {
                    conflatedBytes += line.count - replaced.count
                    return true
                }
                paceOrder.append(runner)
                conflatedBytes += line.count
                return false
            }
            // Below the mark a pace line queues, but an older conflated one for the runner is now stale.
            if !latestPace.isEmpty, let stale = latestPace.removeValue(forKey: runner) {
                conflatedBytes -= stale.count
                queue.append(contentsOf: line)
                return true
            }
        } else if !latestPace.isEmpty, let subject = Self.subject(of: line), let pending = latestPace.removeValue(forKey: subject) {
            conflatedBytes -= pending.count
            queue.append(contentsOf: pending)
        }
        queue.append(contentsOf: line)
        return false
    }

    /// Hands up to `limit` queued bytes to `write`, which returns how many it took (nil when it could take none).
    /// Conflated pace lines join the queue as it drains below the high-water mark. The buffer counts as
    /// congested when the socket refused bytes, not when only the per-turn limit stopped the writing.
    mutating func drain(limit: Int, highWaterMark: Int, _ write: (UnsafeRawBufferPointer) -> Int?) -> Int {
        var total = 0
        var socketIsFull = false
        while total < limit {
            if readIndex == queue.count { refill(highWaterMark: highWaterMark) }
            if readIndex == queue.count { break }
            let end = min(queue.count, readIndex + (limit - total))
            let written = queue.withUnsafeBytes { all in
                write(UnsafeRawBufferPointer(rebasing: all[readIndex..<end]))
            } ?? 0
            readIndex += written
            total += written
            if readIndex == queue.count {
                queue.removeAll(keepingCapacity: queue.capacity <= 64 * 1024)
                readIndex = 0
            } else if readIndex < end {
                socketIsFull = true
                break
            }
        }
        isCongested = socketIsFull
        if readIndex > 0 && readIndex >= queue.count / 2 {
            queue.removeFirst(readIndex)
            readIndex = 0
        }
        if queue.isEmpty && latestPace.isEmpty && queue.capacity > 64 * 1024 {
            queue = []  // give memory back after a burst
        }
        return total
    }

    /// Moves conflated pace lines into the queue while it is below the mark.
    private mutating func refill(highWaterMark: Int) {
        guard !latestPace.isEmpty else {
            paceOrder.removeAll(keepingCapacity: false)
            return
        }
        var index = 0
        while index < paceOrder.count && queue.count - readIndex < highWaterMark {
            if let line = latestPace.removeValue(forKey: paceOrder[index]) {
                conflatedBytes -= line.count
                queue.append(contentsOf: line)
            }
            index += 1
        }
        paceOrder.removeFirst(index)
    }

    /// The runner an event line is about: the text between the first colon and the first space.
    private static func subject(of line: [UInt8]) -> String? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        var end = colon + 1
        while end < line.count, line[end] != UInt8(ascii: " "), line[end] != UInt8(ascii: "\n") { end += 1 }
        return String(decoding: line[(colon + 1)..<end], as: UTF8.self)
    }
}
