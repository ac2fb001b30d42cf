/// A libFuzzer-ready check of the RESP2 reader (`Fuzz/Sources/FuzzRESPReply`, seeds in `Fuzz/Corpus/resp-reply/`).
/// Public because the fuzz package is another package; nothing else uses it.
public enum RESPFuzzing {
    /// What the reader made of some input: the replies in order, then the error, or whether it waits for more.
    struct Outcome: Equatable {
        var replies: [RedisValue]
        var error: BusError?
        var waiting: Bool
    }

    /// Limits small enough that random input reaches them.
    static let limits: RESPParser.Limits = {
        var limits = RESPParser.Limits()
        limits.bulkBytes = 4_096
        limits.arrayElements = 64
        limits.depth = 8
        limits.lineBytes = 256
        limits.replyBytes = 16_384
        return limits
    }()

    /// The same limits for reading back what was written: a status or error line's text is read as lossy UTF-8,
    /// so each byte that is not UTF-8 is written back as U+FFFD's three bytes (a line within the limit read,
    /// at most three times as long written). What matters is that it reads back the same.
    static let writtenBackLimits: RESPParser.Limits = {
        var written = limits
        written.lineBytes = limits.lineBytes * 3
        written.replyBytes = limits.replyBytes * 3
        return written
    }()

    /// Reads `input` in pieces of `pieceSize` bytes (whole when nil), taking replies after every piece as the
    /// connection does.
    static func outcome(of input: UnsafeRawBufferPointer, pieceSize: Int? = nil,
                        limits: RESPParser.Limits = RESPFuzzing.limits) -> Outcome {
        var parser = RESPParser(limits: limits)
        var replies: [RedisValue] = []
        let step = max(1, pieceSize ?? input.count)
        var offset = 0
        repeat {
            let end = min(input.count, offset + step)
            parser.append(UnsafeRawBufferPointer(rebasing: input[offset..<end]))
            offset = end
            do {
                while let reply = try parser.nextReply() { replies.append(reply) }
            } catch {
                return Outcome(replies: replies, error: error, waiting: false)
            }
        } while offset < input.count
        return Outcome(replies: replies, error: nil, waiting: parser.isInsideReply)
    }

    /// Traps (as a fuzzer wants) unless the input reads the same whole, byte by byte and in uneven pieces,
    /// every reply keeps to the limits, every error is an unexpected reply, and every reply written back as
    /// RESP reads back the same. Returns the number of replies read.
    @discardableResult
    public static func check(_ data: UnsafeRawBufferPointer) -> Int {
        let whole = outcome(of: data)
        precondition(whole == outcome(of: data, pieceSize: 1), "byte-by-byte input read differently")
        precondition(whole == outcome(of: data, pieceSize: 7), "input in 7-byte pieces read differently")
        if let error = whole.error { precondition(error.kind == .unexpectedReply, "a parse error of kind \(error.kind)") }
        var written: [UInt8] = []
        for reply in whole.replies {
            precondition(depth(of: reply) <= limits.depth, "a reply nested past the limit")
            write(reply, to: &written)
        }
        let reread = written.withUnsafeBytes { outcome(of: $0, limits: writtenBackLimits) }
        precondition(reread.replies == whole.replies && reread.error == nil && !reread.waiting,
                     "replies written back read differently")
        // The same bytes as a packed entry's value (what the reader decodes from an XREAD's bulk strings).
        checkPack(Array(data))
        return whole.replies.count
    }

    /// Traps unless `bytes` either do not decode as an ``EventPack`` or decode to events that write back as
    /// the same bytes, as many as it counts.
    static func checkPack(_ bytes: [UInt8]) {
        guard let events = EventPack.decode(bytes) else { return }
        precondition(EventPack.count(bytes) == events.count, "a pack counted otherwise than decoded")
        var again: [UInt8] = []
        for event in events { EventPack.append(event, to: &again) }
        precondition(again == bytes, "a pack written back differs")
    }

    private static func depth(of value: RedisValue) -> Int {
        guard case .array(let elements) = value else { return 0 }
        precondition(elements.count <= limits.arrayElements, "an array over the limit")
        return 1 + (elements.map(depth(of:)).max() ?? 0)
    }

    /// `value` as Redis would send it.
    private static func write(_ value: RedisValue, to buffer: inout [UInt8]) {
        switch value {
        case .string(let bytes):
            precondition(bytes.count <= limits.bulkBytes, "a bulk over the limit")
            buffer += Array("$\(bytes.count)\r\n".utf8) + bytes + [13, 10]
        case .status(let text): buffer += Array("+\(text)\r\n".utf8)
        case .error(let text): buffer += Array("-\(text)\r\n".utf8)
        case .integer(let number): buffer += Array(":\(number)\r\n".utf8)
        case .null: buffer += Array("$-1\r\n".utf8)
        case .array(let elements):
            buffer += Array("*\(elements.count)\r\n".utf8)
            for element in elements { write(element, to: &buffer) }
        }
    }
}
