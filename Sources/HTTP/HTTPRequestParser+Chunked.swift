/// Progress through a `Transfer-Encoding: chunked` body (RFC 9112 §7.1).
struct ChunkedProgress: Sendable {
    enum Phase: Sendable {
        /// Reading `HEX[;ext]` CRLF.
        case size
        /// This many data bytes still to come.
        case data(Int)
        /// The CRLF after a chunk's data.
        case dataEnd
        /// Trailer lines (validated like fields, then dropped) up to the empty line.
        case trailers(count: Int)
    }

    /// The first byte of the body on the wire.
    var start: Int
    var lineStart: Int
    var phase = Phase.size
    var body: [UInt8] = []
    /// The most body bytes this request may have (see ``HTTPLimits/maximumBodyBytes(forPath:)``).
    var limit: Int

    init(start: Int, limit: Int) {
        self.start = start
        self.lineStart = start
        self.limit = limit
    }

    mutating func shift(by offset: Int) {
        start -= offset
        lineStart -= offset
    }
}

extension HTTPRequestParser {
    /// The longest chunk-size line (size and extensions, which are ignored).
    static let maximumChunkLineBytes = 256

    /// Decodes what has arrived; true once the last chunk and the trailers are in.
    mutating func scanChunks(_ progress: inout ChunkedProgress) throws(HTTPError) -> Bool {
        // Framing overhead is bounded too, so a body of one-byte chunks can't hold unbounded memory.
        let wireLimit = 2 * progress.limit + limits.maximumHeadBytes
        // No phase reads past this, so the limit trips at the same byte however the input is split.
        let wireBound = progress.start + wireLimit + 1
        while true {
            if position >= wireBound {
                throw HTTPError(.contentTooLarge, "the chunked body's framing exceeds \(wireLimit) bytes")
            }
            switch progress.phase {
            case .size:
                let bound = min(wireBound, progress.lineStart + Self.maximumChunkLineBytes + 1)
                let found = try nextLine(from: progress.lineStart, bound: bound)
                if position - progress.lineStart > Self.maximumChunkLineBytes {
                    throw HTTPError.malformed("a chunk-size line longer than \(Self.maximumChunkLineBytes) bytes")
                }
                guard let line = found else {
                    if position >= wireBound { continue }
                    return false
                }
                progress.lineStart = position
                let size = try parseChunkSize(buffer[line])
                guard progress.body.count + size <= progress.limit else {
                    throw HTTPError(.contentTooLarge, "the body exceeds \(progress.limit) bytes")
                }
                progress.phase = size == 0 ? .trailers(count: 0) : .data(size)
            case .data(let remaining):
                let available = min(remaining, buffer.count - position, wireBound - position)
                guard available > 0 else {
                    if position >= wireBound { continue }
                    return false
                }
                progress.body.append(contentsOf: buffer[position..<(position + available)])
                examinedByteCount &+= available
                position += available
                progress.phase = remaining == available ? .dataEnd : .data(remaining - available)
            case .dataEnd:
                guard buffer.count - position >= 2 else { return false }
                guard buffer[position] == ASCII.cr, buffer[position + 1] == ASCII.lf else {
                    throw HTTPError.malformed("chunk data is not followed by CRLF")
                }
                examinedByteCount &+= 2
                position += 2
                progress.lineStart = position
                progress.phase = .size
            case .trailers(let count):
                guard let line = try nextLine(from: progress.lineStart, bound: wireBound) else {
                    if position >= wireBound { continue }
                    return false
                }
                progress.lineStart = position
                if line.isEmpty { return true }
                _ = try parseField(buffer[line])
                guard count + 1 <= limits.maximumHeaderCount else {
                    throw HTTPError(.headerFieldsTooLarge, "more than \(limits.maximumHeaderCount) trailer fields")
                }
                progress.phase = .trailers(count: count + 1)
            }
        }
    }

    /// `1*HEXDIG [ ";" extensions ]`; leading zeros are fine, a size beyond the body limit is 413.
    func parseChunkSize(_ line: ArraySlice<UInt8>) throws(HTTPError) -> Int {
        let end = line.firstIndex(of: UInt8(ascii: ";")) ?? line.endIndex
        var digits = line[..<end]
        // RFC 9112 allows BWS before the semicolon of an extension.
        if end != line.endIndex { while let last = digits.last, ASCII.isWhitespace(last) { digits = digits.dropLast() } }
        guard !digits.isEmpty, digits.allSatisfy({ ASCII.hexValue($0) != nil }) else {
            throw HTTPError.malformed("a chunk size is hexadecimal digits")
        }
        guard line[end...].allSatisfy({ $0 == ASCII.tab || ($0 >= 0x20 && $0 != 0x7F) }) else {
            throw HTTPError.malformed("control character in a chunk extension")
        }
        let significant = digits.drop { $0 == UInt8(ascii: "0") }
        guard significant.count <= 7 else {
            throw HTTPError(.contentTooLarge, "the body exceeds \(limits.maximumBodyBytes) bytes")
        }
        return significant.reduce(0) { $0 << 4 | Int(ASCII.hexValue($1)!) }
    }
}
