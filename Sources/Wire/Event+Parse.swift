extension Event {
    /// Parses one event line, without its `\n` (a trailing `\r` is allowed).
    ///
    /// Lenient only where it costs nothing: runs of spaces between fields are accepted. Unknown kinds
    /// and keys are accepted here; the typed events decide what they need.
    public static func parse(_ line: String) throws(WireError) -> Event {
        try withUTF8Bytes(of: line) { bytes throws(WireError) in try EventParser.parse(bytes) }
    }

    /// Parses one event line given as bytes, without its `\n` (a trailing `\r` is allowed).
    public static func parse<Bytes: Collection>(_ line: Bytes) throws(WireError) -> Event where Bytes.Element == UInt8 {
        let result: Result<Event, WireError>? = line.withContiguousStorageIfAvailable { buffer in
            Result { () throws(WireError) -> Event in try EventParser.parse(buffer) }
        }
        if let result { return try result.get() }
        let copy = Array(line)
        let copied = copy.withUnsafeBufferPointer { buffer in
            Result { () throws(WireError) -> Event in try EventParser.parse(buffer) }
        }
        return try copied.get()
    }
}

/// The byte-level event grammar; see protocol.md, "Events".
enum EventParser {
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(WireError) -> Event {
        var end = bytes.count
        if end > 0 && bytes[end - 1] == UInt8(ascii: "\n") { end -= 1 }
        if end > 0 && bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        for index in 0..<end where bytes[index] == 0 {
            throw WireError(.nulByte, "NUL byte at offset \(index)")
        }
        guard UTF8Validation.isValid(bytes, 0..<end) else { throw WireError(.badUTF8, "the line is not valid UTF-8") }
        guard end > 0 else { throw WireError(.missingColon, "a blank line is not an event") }

        var index = 0
        while index < end && bytes[index] != UInt8(ascii: ":") {
            let byte = bytes[index]
            let ok = (byte &- 97) < 26 || (index > 0 && ((byte &- 48) < 10 || byte == UInt8(ascii: "_")))
            guard ok else { throw WireError(.badArgument, "an event kind is a lowercase word") }
            index += 1
        }
        guard index < end else { throw WireError(.missingColon, "events look like kind:subject fields") }
        guard index > 0 else { throw WireError(.badArgument, "missing event kind") }
        let kind = text(bytes, 0..<index)
        index += 1
        let subjectStart = index
        while index < end && bytes[index] != UInt8(ascii: " ") {
            guard EventSyntax.isBareByte(bytes[index]) else { throw WireError(.badArgument, "bad character in subject") }
            index += 1
        }
        let subject = text(bytes, subjectStart..<index)

        var fields: [Event.Field] = []
        while true {
            while index < end && bytes[index] == UInt8(ascii: " ") { index += 1 }
            guard index < end else { break }
            if bytes[index] == UInt8(ascii: "\"") {
                fields.append(Event.Field(key: nil, value: try quoted(bytes, &index, end)))
                continue
            }
            let keyStart = index
            while index < end, isKeyByte(bytes[index]) { index += 1 }
            guard index > keyStart, index < end, bytes[index] == UInt8(ascii: "=") else {
                throw WireError(.badArgument, "expected key=value or \"text\"")
            }
            let key = text(bytes, keyStart..<index)
            index += 1
            if index < end && bytes[index] == UInt8(ascii: "\"") {
                fields.append(Event.Field(key: key, value: try quoted(bytes, &index, end)))
                continue
            }
            let valueStart = index
            while index < end && bytes[index] != UInt8(ascii: " ") {
                guard EventSyntax.isBareByte(bytes[index]) else {
                    throw WireError(.badArgument, "bad character in the value of \(key) (quote it)")
                }
                index += 1
            }
            guard index > valueStart else { throw WireError(.badArgument, "empty value for \(key) (use \"\")") }
            fields.append(Event.Field(key: key, value: text(bytes, valueStart..<index)))
        }
        return Event(kind: kind, subject: subject, fields: fields)
    }

    /// Reads `"…"` starting at the opening quote; leaves `index` after the closing quote, which must
    /// end the line or be followed by a space.
    static func quoted(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int, _ end: Int) throws(WireError) -> String {
        index += 1
        var value: [UInt8] = []
        while true {
            guard index < end else { throw WireError(.badArgument, "unterminated quoted value") }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard index == end || bytes[index] == UInt8(ascii: " ") else {
                    throw WireError(.badArgument, "a quoted value must be followed by a space")
                }
                return String(decoding: value, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < end else { throw WireError(.badArgument, "unterminated escape") }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): value.append(escaped)
                case UInt8(ascii: "n"): value.append(UInt8(ascii: "\n"))
                case UInt8(ascii: "r"): value.append(UInt8(ascii: "\r"))
                case UInt8(ascii: "t"): value.append(UInt8(ascii: "\t"))
                default: throw WireError(.badArgument, "unknown escape \\\(Character(Unicode.Scalar(escaped)))")
                }
            case 0..<0x20, 0x7F:
                throw WireError(.badArgument, "control character in a quoted value (escape it)")
            default:
                value.append(byte)
            }
        }
    }

    @inline(__always) static func isKeyByte(_ byte: UInt8) -> Bool {
        (byte &- 97) < 26 || (byte &- 48) < 10 || byte == UInt8(ascii: "_")
    }

    static func text(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }
}
