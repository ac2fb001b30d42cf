/// Reads Redis's replies (RESP2, the protocol of every Redis since 2.0: `+status`, `-error`, `:integer`,
/// `$bulk`, `*array`, each line ending in CR LF) from bytes that arrive in pieces of any size.
///
/// Strict: anything Redis itself never sends is an error (``BusError/Kind/unexpectedReply``), after which the
/// connection can only be dropped: an unknown type byte (RESP3's `_`, `%`, `~` included: the bus never asks for
/// RESP3), a line ended by a bare CR or LF, a number with a sign other than a leading `-`, leading or trailing
/// junk or too many digits, a bulk not followed by CR LF, a length below -1. Bounded: no length read off the
/// wire allocates anything by itself (arrays reserve at most ``Limits/reservedElements``, bulks are copied only
/// once all their bytes are here), and what one reply may hold is capped by ``Limits``.
///
/// Resumable: a reply split at any byte is parsed once, not again from its start each time more comes; the
/// arrays being filled wait on a stack. Pure: no I/O (``RedisConnection`` feeds it), so it is fuzzed on its own
/// (`Fuzz/Sources/FuzzRESPReply`).
package struct RESPParser {
    /// What one reply may hold. The defaults fit what the bus asks for with room to spare (an `XREAD` of a
    /// full batch of events is a few MiB) and stop a broken or hostile server from taking the node's memory.
    package struct Limits: Sendable {
        /// The longest bulk string, in bytes (Redis's own `proto-max-bulk-len` is 512 MiB).
        package var bulkBytes = 64 << 20
        /// The most elements one array may say it has.
        package var arrayElements = 1 << 20
        /// How deep arrays may nest (an `XREAD` reply is 4 deep).
        package var depth = 16
        /// The longest line (a status, an error, a length), CR LF not counted.
        package var lineBytes = 64 << 10
        /// The most bytes received for one reply before it is whole.
        package var replyBytes = 256 << 20
        /// The most elements reserved ahead for an array: larger ones grow as their elements come.
        package var reservedElements = 1_024

        /// The defaults.
        package init() {}
    }

    /// The limits this parser applies.
    package let limits: Limits
    /// Bytes received and not parsed yet; `position` is where parsing stands in it.
    private var buffer: [UInt8] = []
    private var position = 0
    /// The arrays being filled, innermost last.
    private var open: [(elements: [RedisValue], remaining: Int)] = []
    /// Bytes consumed by the reply in progress (its finished parts are no longer in `buffer`).
    private var consumedOfReply = 0

    /// A parser with `limits`.
    package init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Bytes received and not yet part of a whole reply.
    package var bufferedBytes: Int { buffer.count - position }

    /// True while a reply has begun and is not whole yet.
    package var isInsideReply: Bool { !open.isEmpty || bufferedBytes > 0 }

    /// Adds bytes as they came off the socket.
    package mutating func append(_ bytes: UnsafeRawBufferPointer) {
        compactIfWorthIt()
        buffer.append(contentsOf: bytes)
    }

    /// Adds bytes (tests and the fuzz target).
    package mutating func append<Bytes: Sequence>(contentsOf bytes: Bytes) where Bytes.Element == UInt8 {
        compactIfWorthIt()
        buffer.append(contentsOf: bytes)
    }

    /// The next whole reply, or nil until more bytes come. Throws ``BusError/Kind/unexpectedReply`` on bytes
    /// Redis would never send or past a limit; the parser is then unusable (drop the connection).
    package mutating func nextReply() throws(BusError) -> RedisValue? {
        while true {
            guard let value = try nextValue() else {
                if consumedOfReply + bufferedBytes > limits.replyBytes {
                    throw Self.failure("a reply over \(limits.replyBytes) bytes")
                }
                return nil
            }
            // A whole value: it ends the reply, or fills its array's next place (which may end that array).
            var finished = value
            while true {
                guard let top = open.indices.last else {
                    consumedOfReply = 0
                    return finished
                }
                open[top].elements.append(finished)
                open[top].remaining -= 1
                guard open[top].remaining == 0 else { break }
                finished = .array(open.removeLast().elements)
            }
        }
    }

    /// One value that is not a non-empty array (those are opened on the stack and nil returned), or nil when
    /// its bytes are not all here (nothing consumed then).
    private mutating func nextValue() throws(BusError) -> RedisValue? {
        while true {
            guard let (type, line, end) = try headerLine() else { return nil }
            switch type {
            case UInt8(ascii: "+"):
                consume(to: end)
                return .status(String(decoding: line, as: UTF8.self))
            case UInt8(ascii: "-"):
                consume(to: end)
                return .error(String(decoding: line, as: UTF8.self))
            case UInt8(ascii: ":"):
                let number = try Self.integer(line, of: "an integer reply")
                consume(to: end)
                return .integer(number)
            case UInt8(ascii: "$"):
                guard let length = try Self.length(line, of: "a bulk", counting: "bytes", atMost: limits.bulkBytes) else {
                    consume(to: end)
                    return .null
                }
                let start = end, stop = start + Int(length)
                guard buffer.count >= stop + 2 else { return nil }
                guard buffer[stop] == 13, buffer[stop + 1] == 10 else {
                    throw Self.failure("a bulk of \(length) bytes not followed by CR LF")
                }
                let bytes = Array(buffer[start..<stop])
                consume(to: stop + 2)
                return .string(bytes)
            case UInt8(ascii: "*"):
                guard let count = try Self.length(line, of: "an array", counting: "elements",
                                                  atMost: limits.arrayElements) else {
                    consume(to: end)
                    return .null
                }
                consume(to: end)
                if count == 0 { return .array([]) }
                guard open.count < limits.depth else { throw Self.failure("arrays nested over \(limits.depth) deep") }
                var elements: [RedisValue] = []
                elements.reserveCapacity(min(Int(count), limits.reservedElements))
                open.append((elements, Int(count)))
                // Go on with the first element.
            default:
                throw Self.failure("a reply starting with byte \(type)")
            }
        }
    }

    /// The type byte and the rest of the line at `position`, and where the next line starts; nil when the
    /// line's CR LF is not here yet. A CR or LF anywhere but at the end of the line is an error.
    private func headerLine() throws(BusError) -> (type: UInt8, line: ArraySlice<UInt8>, end: Int)? {
        guard position < buffer.count else { return nil }
        let type = buffer[position]
        // A line holds at most `lineBytes` bytes, then CR: that many places are looked at, no more.
        let available = buffer.count - (position + 1)
        var index = position + 1
        let scanEnd = index + min(available, limits.lineBytes + 1)
        while index < scanEnd {
            switch buffer[index] {
            case 13:
                guard index + 1 < buffer.count else { return nil }
                guard buffer[index + 1] == 10 else { throw Self.failure("a CR without LF in a reply's line") }
                return (type, buffer[(position + 1)..<index], index + 2)
            case 10:
                throw Self.failure("an LF without CR in a reply's line")
            default:
                index += 1
            }
        }
        guard available <= limits.lineBytes + 1 else { throw Self.failure("a reply line over \(limits.lineBytes) bytes") }
        return nil
    }

    /// Marks the bytes up to `end` as parsed.
    private mutating func consume(to end: Int) {
        consumedOfReply += end - position
        position = end
    }

    /// Drops parsed bytes from the front once they are most of the buffer (amortised O(1) per byte).
    private mutating func compactIfWorthIt() {
        guard position > 0 else { return }
        if position == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 20)
            position = 0
        } else if position >= 64 << 10 && position * 2 >= buffer.count {
            buffer.removeFirst(position)
            position = 0
        }
    }

    /// The length in a bulk's or an array's header (`what`, "a bulk" or "an array", of `unit`): nil for -1, RESP2's
    /// null; refused when otherwise negative or over `limit`.
    private static func length(_ digits: ArraySlice<UInt8>, of what: String, counting unit: String,
                               atMost limit: Int) throws(BusError) -> Int64? {
        let length = try integer(digits, of: "\(what) length")
        if length == -1 { return nil }
        guard length >= 0 else { throw failure("\(what) length of \(length)") }
        guard length <= limit else { throw failure("\(what) of \(length) \(unit) (at most \(limit))") }
        return length
    }

    /// A RESP number: an optional `-` and 1 to 19 digits, nothing else, within Int64.
    private static func integer(_ digits: ArraySlice<UInt8>, of what: String) throws(BusError) -> Int64 {
        var rest = digits[...]
        let negative = rest.first == UInt8(ascii: "-")
        if negative { rest = rest.dropFirst() }
        guard !rest.isEmpty, rest.count <= 19 else { throw failure("\(what) of \(rest.count) digits") }
        var value: Int64 = 0
        for byte in rest {
            guard (48...57).contains(byte) else {
                throw failure("\(what) that is not a number: \(String(decoding: digits.prefix(24), as: UTF8.self))")
            }
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int64(byte - 48))
            guard !overflow1, !overflow2 else { throw failure("\(what) past 64 bits") }
            value = sum
        }
        return negative ? -value : value
    }

    private static func failure(_ what: String) -> BusError {
        BusError(.unexpectedReply, "Redis sent \(what): not RESP2 as Redis speaks it")
    }
}
