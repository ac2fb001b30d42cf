/// One header field as received or to be sent.
public struct HTTPHeader: Sendable, Hashable {
    /// The field name as written (compare with `HTTPHeaders`' case-insensitive lookups).
    public var name: String
    /// The value without leading and trailing whitespace.
    public var value: String

    /// Creates a field.
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// Header fields in order, looked up case-insensitively (field names are ASCII tokens).
public struct HTTPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// The fields in the order received or added.
    public private(set) var fields: [HTTPHeader]

    /// Creates headers from fields.
    public init(_ fields: [HTTPHeader] = []) {
        self.fields = fields
    }

    /// Creates headers from `name: value` pairs, in order.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements.map { HTTPHeader($0.0, $0.1) })
    }

    /// Iterates the fields in order.
    public func makeIterator() -> IndexingIterator<[HTTPHeader]> { fields.makeIterator() }

    /// How many fields.
    public var count: Int { fields.count }

    /// The first value of the field `name`, ignoring case.
    public subscript(name: String) -> String? {
        fields.first { ASCII.equalIgnoringCase($0.name, name) }?.value
    }

    /// Every value of the field `name`, ignoring case, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { ASCII.equalIgnoringCase($0.name, name) }.map(\.value)
    }

    /// The comma-separated list elements of every `name` field, trimmed, empty elements dropped.
    public func listElements(_ name: String) -> [String] {
        values(name).flatMap { value in
            value.split(separator: ",").map { ASCII.trimmingWhitespace($0) }.filter { !$0.isEmpty }
        }
    }

    /// Whether the list header `name` (e.g. `Connection`) contains `token`, ignoring case.
    public func contains(token: String, in name: String) -> Bool {
        listElements(name).contains { ASCII.equalIgnoringCase($0, token) }
    }

    /// Appends a field (the encoder writes it as given, minus any CR, LF or NUL).
    public mutating func add(_ name: String, _ value: String) {
        fields.append(HTTPHeader(name, value))
    }

    /// Replaces every `name` field with one, or adds it.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        add(name, value)
    }

    /// Removes every `name` field.
    public mutating func remove(_ name: String) {
        fields.removeAll { ASCII.equalIgnoringCase($0.name, name) }
    }
}

/// ASCII helpers: HTTP's syntax is bytes, and Foundation is not needed for any of it.
enum ASCII {
    static let cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n"), space = UInt8(ascii: " "), tab = UInt8(ascii: "\t")

    @inline(__always) static func lowered(_ byte: UInt8) -> UInt8 {
        (byte &- 65) < 26 ? byte | 0x20 : byte
    }

    static func equalIgnoringCase(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { lowered($0) == lowered($1) }
    }

    static func equalIgnoringCase(_ a: some Collection<UInt8>, _ b: StaticString) -> Bool {
        b.withUTF8Buffer { expected in
            a.count == expected.count && zip(a, expected).allSatisfy { lowered($0) == lowered($1) }
        }
    }

    /// A `tchar` of RFC 9110: the bytes of methods, field names and transfer codings.
    @inline(__always) static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
             UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// A 256-entry membership table of ASCII letters, digits and `extra`.
    static func table(alphanumericsAnd extra: String) -> [Bool] {
        (0...255).map { (value: Int) -> Bool in
            let byte = UInt8(value)
            return (byte &- 97) < 26 || (byte &- 65) < 26 || (byte &- 48) < 10 || extra.utf8.contains(byte)
        }
    }

    @inline(__always) static func isWhitespace(_ byte: UInt8) -> Bool { byte == space || byte == tab }

    static func trimmingWhitespace(_ text: Substring) -> String {
        var bytes = text.utf8[...]
        while let first = bytes.first, isWhitespace(first) { bytes = bytes.dropFirst() }
        while let last = bytes.last, isWhitespace(last) { bytes = bytes.dropLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    @inline(__always) static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
