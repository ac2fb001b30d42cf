/// A server-to-client line in its generic form: `KIND:SUBJECT key=value key="quoted value" "text"`.
///
/// Every typed event (`PaceEvent`, `BadgeEvent`, …) converts to and from this form, so there is one
/// grammar, one formatter and one parser for all of them (see protocol.md, "Events").
public struct Event: Sendable, Hashable {
    /// One `key=value` pair, or a positional quoted text when `key` is nil.
    public struct Field: Sendable, Hashable {
        /// Lowercase `[a-z0-9_]+`, or nil for a positional text.
        public var key: String?
        /// The value, unescaped.
        public var value: String
        /// What the value is, for the JSON form (`Event+JSON.swift`). The line doesn't show it, so it is
        /// not part of equality: a parsed field is `.text` and equals the typed event's `.number` field.
        public var shape: Shape

        /// What a field's value is, so the JSON form writes numbers, nulls and booleans where the line
        /// writes bare words.
        public enum Shape: Sendable, Hashable {
            /// A JSON string.
            case text
            /// A JSON string, or null when the value is `-`.
            case textOrDash
            /// A JSON string, or null when the value is `no` (the dates of a badge board).
            case textOrNo
            /// A JSON number, or null when the value is `-`.
            case number
            /// A JSON array of numbers from `a,b,-`: null for `-`.
            case numbers
            /// `yes` and `no` as true and false.
            case flag
        }

        /// Creates a field.
        public init(key: String?, value: String, shape: Shape = .text) {
            self.key = key
            self.value = value
            self.shape = shape
        }

        /// Equal key and value (the shape is a formatting hint, see `shape`).
        public static func == (lhs: Field, rhs: Field) -> Bool {
            lhs.key == rhs.key && lhs.value == rhs.value
        }

        /// Hashes key and value.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(key)
            hasher.combine(value)
        }

        /// Creates a `key=value` field.
        public init(_ key: String, _ value: String) {
            self.init(key: key, value: value)
        }

        /// Creates a positional text field.
        public static func text(_ value: String) -> Field {
            Field(key: nil, value: value)
        }
    }

    /// Lowercase word before the colon, e.g. `pace`.
    public var kind: String
    /// The runner name, `*`, an error code, a word, or empty.
    public var subject: String
    /// Fields in order.
    public var fields: [Field]

    /// Creates an event.
    public init(kind: String, subject: String, fields: [Field] = []) {
        self.kind = kind
        self.subject = subject
        self.fields = fields
    }

    /// The value of the first field with this key.
    public subscript(key: String) -> String? {
        fields.first { $0.key == key }?.value
    }

    /// The first positional text, if any.
    public var text: String? {
        fields.first { $0.key == nil }?.value
    }

    /// The canonical line, without newline.
    public var line: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128)
        appendLine(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the canonical line and `\n`.
    public func append(to buffer: inout [UInt8]) {
        appendLine(to: &buffer)
        buffer.append(UInt8(ascii: "\n"))
    }

    private func appendLine(to buffer: inout [UInt8]) {
        buffer.append(contentsOf: kind.utf8)
        buffer.append(UInt8(ascii: ":"))
        for byte in subject.utf8 {
            // A subject can't hold separators; names are validated upstream, this only guards the framing.
            buffer.append(EventSyntax.isBareByte(byte) ? byte : UInt8(ascii: "_"))
        }
        for field in fields {
            buffer.append(UInt8(ascii: " "))
            if let key = field.key {
                buffer.append(contentsOf: key.utf8)
                buffer.append(UInt8(ascii: "="))
                EventSyntax.appendValue(field.value, to: &buffer)
            } else {
                EventSyntax.appendQuoted(field.value, to: &buffer)
            }
        }
    }
}

/// Value quoting shared by the generic formatter and the hand-written fast paths.
enum EventSyntax {
    /// A byte allowed in a bare value or subject: not space, `"`, `\` or an ASCII control.
    @inline(__always) static func isBareByte(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte != 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
    }

    /// True when `value` can be written without quotes.
    static func isBare(_ value: String) -> Bool {
        // Native strings are contiguous UTF-8: checking the buffer avoids the slower generic view.
        !value.isEmpty && (value.utf8.withContiguousStorageIfAvailable(allBare) ?? value.utf8.allSatisfy(isBareByte))
    }

    /// True when every byte is bare (a plain loop: the `pace:` fast path runs it on each text it copies).
    static func allBare(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        for byte in bytes where !isBareByte(byte) { return false }
        return true
    }

    /// Writes `value` bare when possible, quoted otherwise.
    static func appendValue(_ value: String, to buffer: inout [UInt8]) {
        if isBare(value) {
            buffer.append(contentsOf: value.utf8)
        } else {
            appendQuoted(value, to: &buffer)
        }
    }

    /// What a quoted value does with ASCII controls other than `\n`, `\r` and `\t`.
    enum OtherControls {
        /// Replaced by U+FFFD (the line protocol: no reader should meet a raw control).
        case replaced
        /// Written as `\u00XX` (JSON).
        case unicodeEscaped
    }

    static let hexDigits = Array("0123456789abcdef".utf8)

    /// Writes `"value"` with `\"`, `\\`, `\n`, `\r`, `\t` escaped and other ASCII controls as `otherControls` says;
    /// the one escaper behind both the line protocol and JSON.
    static func appendQuoted(_ value: String, otherControls: OtherControls = .replaced, to buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20, 0x7F:
                switch otherControls {
                case .replaced: buffer.append(contentsOf: [0xEF, 0xBF, 0xBD])
                case .unicodeEscaped:
                    buffer.append(contentsOf: "\\u00".utf8)
                    buffer.append(hexDigits[Int(byte >> 4)])
                    buffer.append(hexDigits[Int(byte & 0xF)])
                }
            default: buffer.append(byte)
            }
        }
        buffer.append(UInt8(ascii: "\""))
    }
}
