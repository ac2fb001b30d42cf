/// One result of `LineFramer.nextLine()`.
public enum FramedLine: Sendable, Hashable {
    /// A complete line without its `\n` and without a trailing `\r`.
    ///
    /// The slice shares the framer's storage: its indices are not zero-based (use `startIndex`),
    /// and it should be consumed before the next `append` to avoid a copy.
    case line(ArraySlice<UInt8>)
    /// A line longer than the maximum was discarded (reported once per such line).
    case tooLong
}

/// Cuts a byte stream into lines ending in `\n` (or `\r\n`), for both server and client.
///
/// Call `append` with each chunk read, then `nextLine()` until it returns nil. Memory stays bounded
/// by the maximum line length plus one chunk: an over-long line is dropped as soon as it is known
/// to be too long (even across appends that are not drained), and the rest of it is skipped on
/// arrival, up to and including its newline. Only complete lines the caller has not taken yet are
/// kept beyond that bound. Consumed bytes are compacted lazily, never per line.
public struct LineFramer: Sendable {
    /// Longest accepted line in bytes, not counting the `\n` or `\r\n` ending.
    public let maximumLineLength: Int

    /// Received bytes; `buffer[head...]` are not yet returned.
    private var buffer: [UInt8] = []
    /// First byte not yet handed out.
    private var head = 0
    /// `buffer[head..<scanned]` is known to hold no newline, so searches resume there.
    private var scanned = 0
    /// Skipping the rest of an over-long line until its newline (the buffer is then empty).
    private var discarding = false
    /// An over-long line was dropped inside `append` and has yet to be reported.
    private var tooLongPending = false

    /// Compaction threshold: consumed bytes are only moved out once there are this many and at least
    /// as many as remain, so compaction costs O(1) per byte amortised.
    private static let compactionThreshold = 4096
    /// Capacity kept after the buffer drains; a larger one (after a burst) is released. A phone's line is
    /// well under 100 bytes: thousands of connections each keeping a burst's 8 KB added up to megabytes.
    private static let retainedCapacity = 2048

    /// Creates a framer.
    public init(maximumLineLength: Int = 4096) {
        precondition(maximumLineLength > 0)
        self.maximumLineLength = maximumLineLength
    }

    /// Bytes held that have not been returned as lines yet (the unterminated tail).
    public var bufferedByteCount: Int { buffer.count - head }

    /// Adds received bytes.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        var start = 0
        if discarding {
            guard let newline = Self.firstNewline(in: bytes, from: 0) else { return }
            discarding = false
            start = newline + 1
        }
        compact()
        // Without a newline in what is buffered, all of it is one partial line: if the new bytes make it
        // too long, drop it now rather than buffering it, so appending many chunks without draining
        // stays bounded too. (Buffered complete lines are kept until the caller takes them.)
        if scanned < buffer.count {
            scanned = buffer.withUnsafeBytes { Self.firstNewline(in: $0, from: scanned) } ?? buffer.count
        }
        if scanned == buffer.count {
            let pending = buffer.count - head
            // + 1 for a `\r` before the `\n`. The tail may already be too long (appended after a nextLine()
            // that found no newline in it yet): then there is no room at all.
            let room = max(0, maximumLineLength + 1 - pending)
            let searchEnd = min(bytes.count, start + room + 1)
            if Self.firstNewline(in: UnsafeRawBufferPointer(rebasing: bytes[start..<searchEnd]), from: 0) == nil
                && bytes.count - start > room {
                buffer.removeAll(keepingCapacity: true)
                head = 0
                scanned = 0
                tooLongPending = true
                guard let newline = Self.firstNewline(in: bytes, from: start + room) else {
                    discarding = true
                    return
                }
                start = newline + 1
            }
        }
        buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start...]))
    }

    /// Adds received bytes.
    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// Adds received bytes.
    public mutating func append(_ bytes: ArraySlice<UInt8>) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// The next complete line, a `.tooLong` report, or nil when more bytes are needed.
    public mutating func nextLine() -> FramedLine? {
        if tooLongPending {
            tooLongPending = false
            return .tooLong
        }
        let newline = buffer.withUnsafeBytes { Self.firstNewline(in: $0, from: scanned) }
        guard let newline else {
            if head == buffer.count && buffer.capacity > Self.retainedCapacity {
                // Everything is handled: the burst's buffer goes now, not at the next append (which may be
                // long in coming once a phone has resent its backlog).
                buffer = []
                head = 0
            }
            scanned = buffer.count
            if buffer.count - head > maximumLineLength + 1 {
                head = buffer.count
                scanned = head
                discarding = true
                return .tooLong
            }
            return nil
        }
        let start = head
        var end = newline
        head = newline + 1
        scanned = head
        if end > start && buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        if end - start > maximumLineLength { return .tooLong }
        return .line(buffer[start..<end])
    }

    /// At end of stream: the unterminated last line, if any (and not too long), emptying the framer.
    public mutating func finish() -> FramedLine? {
        defer {
            buffer.removeAll(keepingCapacity: true)
            head = 0
            scanned = 0
            discarding = false
        }
        if tooLongPending {
            tooLongPending = false
            return .tooLong
        }
        guard !discarding, head < buffer.count else { return nil }
        var end = buffer.count
        if buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        if end - head > maximumLineLength { return .tooLong }
        return .line(ArraySlice(buffer[head..<end]))
    }

    private mutating func compact() {
        if head == buffer.count {
            if head > 0 {
                // A burst's buffer is given back once drained, so thousands of quiet connections do not each
                // keep the memory of their busiest moment.
                buffer.removeAll(keepingCapacity: buffer.capacity <= Self.retainedCapacity)
                head = 0
                scanned = 0
            }
        } else if head >= Self.compactionThreshold && head >= buffer.count - head {
            buffer.removeSubrange(0..<head)
            scanned -= head
            head = 0
        }
    }

    private static func firstNewline(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        var index = start
        let count = bytes.count
        while index < count {
            if bytes[index] == UInt8(ascii: "\n") { return index }
            index += 1
        }
        return nil
    }
}
