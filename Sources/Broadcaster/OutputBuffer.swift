import LiveCore
import Glibc
import Reactor

/// The bytes waiting to be written to one connection, with per-runner conflation of `pace:` lines.
///
/// Below the high-water mark every line is queued in order, and so is everything while the socket keeps up (a
/// burst made in one loop turn is not a slow reader). Once a write left bytes behind and the queue is above the
/// mark, a `pace:` line does not queue: it replaces the runner's pending pace line (a spectator only needs the
/// newest position). Any other event about that runner first moves the runner's pending pace line into the
/// queue, so order per runner is kept and a stale position never arrives after `end:`. Which runner a line is
/// about is its ``LineRole``, given by whoever made it, never read from its text: the same rule holds for the
/// line protocol and for an event stream's frames. Owned by one connection; loop thread only.
///
/// Lines are queued by reference (``SharedLine``), not copied: the bytes a broadcast made once are written to
/// each socket straight from that one copy, gathered into one `writev` per turn.
struct OutputBuffer {
    /// Queued lines; those before `head` are written, and so are the first `headOffset` bytes of `chunks[head]`.
    private var chunks: [SharedLine] = []
    private var head = 0
    private var headOffset = 0
    /// Bytes queued and not yet written.
    private var queuedBytes = 0
    /// The newest pending pace line per runner, waiting for the queue to drain.
    private var latestPace: [String: SharedLine] = [:]
    /// Runners in the order their pace lines were first conflated (entries may be stale: checked on refill).
    private var paceOrder: [String] = []
    private var conflatedBytes = 0
    /// True when the last write could not take everything: the reader is behind.
    private(set) var isCongested = false
    /// Cheers not queued because the reader was behind, since the last time they were taken (to say so).
    private(set) var droppedCheers = 0
    /// Bytes written since the buffer was made (a reader that takes none for long has stopped reading).
    private(set) var writtenBytes = 0

    /// Bytes waiting, queued and conflated.
    var pendingBytes: Int { queuedBytes + conflatedBytes }

    /// True when nothing waits.
    var isEmpty: Bool { pendingBytes == 0 }

    /// Queues a line (with its newline), copying it once (HTTP answers, a stream's framing, tests).
    @discardableResult
    mutating func append(_ line: [UInt8], as role: LineRole, highWaterMark: Int) -> Bool {
        append(SharedLine.copying(line), as: role, highWaterMark: highWaterMark)
    }

    /// Queues a line (with its newline) by reference. Its `role` says what a reader that is behind may go
    /// without: a runner's `pace:` line replaces that runner's pending one, a cheer is dropped (and counted)
    /// while the reader is behind, above the mark; any other event about a runner first queues that runner's
    /// pending pace line. Returns true when the line replaced an older pending pace line or was dropped (one
    /// event conflated).
    @discardableResult
    mutating func append(_ line: SharedLine, as role: LineRole, highWaterMark: Int) -> Bool {
        let behind = isCongested && queuedBytes >= highWaterMark
        switch role {
        case .reply:
            break
        case .cheer where behind:
            droppedCheers += 1
            return true
        case .pace(let runner) where behind:
            let replaced = latestPace.updateValue(line, forKey: runner)
            if let replaced {
                conflatedBytes += line.count - replaced.count
                return true
            }
            paceOrder.append(runner)
            conflatedBytes += line.count
            return false
        case .pace(let runner):
            // Below the mark a pace line queues, but an older conflated one for the runner is now stale.
            if !latestPace.isEmpty, let stale = latestPace.removeValue(forKey: runner) {
                conflatedBytes -= stale.count
                enqueue(line)
                return true
            }
        case .cheer(let runner), .event(let runner):
            if !latestPace.isEmpty, let pending = latestPace.removeValue(forKey: runner) {
                conflatedBytes -= pending.count
                enqueue(pending)
            }
        }
        enqueue(line)
        return false
    }

    /// The cheers dropped since the last call, now that the reader caught up (below the mark); 0 while it is
    /// still behind or none were.
    mutating func takeDroppedCheers(highWaterMark: Int) -> Int {
        guard droppedCheers > 0, !isCongested || queuedBytes < highWaterMark else { return 0 }
        defer { droppedCheers = 0 }
        return droppedCheers
    }

    /// Hands up to `limit` queued bytes to `write` as one gathered write (at most
    /// ``StreamSocket/maximumVectors`` lines; more only if the socket took all of those), which returns how
    /// many bytes it took (nil when it could take none).
    /// Conflated pace lines join the queue as it drains below the high-water mark. The buffer counts as
    /// congested when the socket refused bytes, not when only the per-turn limit stopped the writing.
    mutating func drain(limit: Int, highWaterMark: Int, _ write: (UnsafeBufferPointer<iovec>) -> Int?) -> Int {
        var total = 0
        var socketIsFull = false
        while total < limit {
            if head == chunks.count { refill(highWaterMark: highWaterMark) }
            if head == chunks.count { break }
            let (offered, written) = withUnsafeTemporaryAllocation(of: iovec.self,
                                                                    capacity: StreamSocket.maximumVectors) { vectors in
                let (count, offered) = gather(into: vectors, limit: limit - total)
                return (offered, write(UnsafeBufferPointer(rebasing: vectors[0..<count])) ?? 0)
            }
            consume(written)
            total += written
            if written < offered {
                socketIsFull = true
                break
            }
        }
        isCongested = socketIsFull
        if head == chunks.count {
            chunks.removeAll(keepingCapacity: chunks.capacity <= 1024)  // give memory back after a burst
            head = 0
        } else if head >= 64 && head >= chunks.count / 2 {
            chunks.removeFirst(head)
            head = 0
        }
        return total
    }

    /// Fills `vectors` with the queued lines from the first unwritten byte, up to `limit` bytes; returns how
    /// many vectors and bytes.
    private func gather(into vectors: UnsafeMutableBufferPointer<iovec>, limit: Int) -> (count: Int, bytes: Int) {
        var count = 0, bytes = 0, index = head
        while index < chunks.count && count < vectors.count && bytes < limit {
            let line = chunks[index].bytes
            let skip = index == head ? headOffset : 0
            let length = min(line.count - skip, limit - bytes)
            vectors[count] = iovec(iov_base: UnsafeMutableRawPointer(mutating: line.baseAddress.map { $0 + skip }),
                                   iov_len: length)
            count += 1
            bytes += length
            index += 1
        }
        return (count, bytes)
    }

    /// Marks `written` bytes from the front of the queue as written, dropping the lines wholly written.
    private mutating func consume(_ written: Int) {
        queuedBytes -= written
        writtenBytes &+= written
        var left = written
        while head < chunks.count && left >= chunks[head].count - headOffset {
            left -= chunks[head].count - headOffset
            headOffset = 0
            head += 1
        }
        headOffset += left
    }

    private mutating func enqueue(_ line: SharedLine) {
        chunks.append(line)
        queuedBytes += line.count
    }

    /// Moves conflated pace lines into the queue while it is below the mark.
    private mutating func refill(highWaterMark: Int) {
        guard !latestPace.isEmpty else {
            paceOrder.removeAll(keepingCapacity: false)
            return
        }
        var index = 0
        while index < paceOrder.count && queuedBytes < highWaterMark {
            if let line = latestPace.removeValue(forKey: paceOrder[index]) {
                conflatedBytes -= line.count
                enqueue(line)
            }
            index += 1
        }
        paceOrder.removeFirst(index)
    }
}
