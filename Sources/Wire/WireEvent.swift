/// A typed server event: one kind of line with named, typed fields.
///
/// Each conforming type converts losslessly to the generic `Event` and back (up to the fixed number
/// formats), so `try T(event: e.event) == e` for values already at wire precision.
public protocol WireEvent: Sendable, Hashable {
    /// The kind word this type reads and writes, e.g. `pace`.
    static var kind: String { get }
    /// Reads the typed event; throws when the kind differs or a required field is missing or malformed.
    /// Unknown extra fields are ignored, so the server can add fields without breaking old clients.
    init(event: Event) throws(WireError)
    /// The generic form.
    var event: Event { get }
    /// Appends the line and `\n` (types on hot paths override this with direct formatting).
    func append(to buffer: inout [UInt8])
    /// The JSON key of the line's subject: `runner` for events about a runner, `subject` otherwise.
    static var subjectKey: String { get }
    /// Appends the event's JSON object (see `Event+JSON.swift`; hot types override it like `append(to:)`).
    func appendJSON(to buffer: inout [UInt8])
}

extension WireEvent {
    /// `runner`: most events are about a runner.
    public static var subjectKey: String { "runner" }

    /// The canonical line, without newline.
    public var line: String {
        var bytes: [UInt8] = []
        append(to: &bytes)
        bytes.removeLast()
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the line and `\n`.
    public func append(to buffer: inout [UInt8]) {
        event.append(to: &buffer)
    }

    /// Parses a line of this kind.
    public init(line: String) throws(WireError) {
        try self.init(event: Event.parse(line))
    }
}

/// Typed field access for the `init(event:)` of typed events; every failure names the kind and key.
extension Event {
    /// Throws unless the kind is `kind`.
    func expect(kind expected: String) throws(WireError) {
        guard kind == expected else {
            throw WireError(.badArgument, "expected a \(expected): event, got \(kind):")
        }
    }

    /// A required field's text.
    func string(_ key: String) throws(WireError) -> String {
        guard let value = self[key] else { throw WireError(.badArgument, "\(kind): missing \(key)=") }
        return value
    }

    /// A required field that is nil when written `-`.
    func optionalString(_ key: String, none: String = "-") throws(WireError) -> String? {
        let value = try string(key)
        return value == none ? nil : value
    }

    /// A required decimal.
    func double(_ key: String) throws(WireError) -> Double {
        guard let value = DecimalParser.double(try string(key)) else {
            throw WireError(.badNumber, "\(kind): \(key)= is not a decimal number")
        }
        return value
    }

    /// A required decimal or `-`.
    func optionalDouble(_ key: String) throws(WireError) -> Double? {
        let text = try string(key)
        if text == "-" { return nil }
        guard let value = DecimalParser.double(text) else {
            throw WireError(.badNumber, "\(kind): \(key)= is not a decimal number or -")
        }
        return value
    }

    /// An optional decimal: nil when the field is absent (fields added to an event later are written only when
    /// known, so that older clients, which ignore keys they do not know, parse the line as before).
    func absentOrDouble(_ key: String) throws(WireError) -> Double? {
        guard let text = self[key] else { return nil }
        guard let value = DecimalParser.double(text) else {
            throw WireError(.badNumber, "\(kind): \(key)= is not a decimal number")
        }
        return value
    }

    /// An optional list of decimals or `-`, `a,b,-,c` (`.numbers`): empty when the field is absent.
    func absentOrDoubles(_ key: String) throws(WireError) -> [Double?] {
        guard let text = self[key] else { return [] }
        var values: [Double?] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            if item == "-" {
                values.append(nil)
            } else if let value = DecimalParser.double(String(item)) {
                values.append(value)
            } else {
                throw WireError(.badNumber, "\(kind): \(key)= is not a list of decimal numbers or -")
            }
        }
        return values
    }

    /// A required 64-bit integer.
    func int64(_ key: String) throws(WireError) -> Int64 {
        guard let value = DecimalParser.integer(try string(key)) else {
            throw WireError(.badNumber, "\(kind): \(key)= is not a whole number")
        }
        return value
    }

    /// A required integer.
    func int(_ key: String) throws(WireError) -> Int {
        Int(truncatingIfNeeded: try int64(key))
    }

    /// A required `yes` or `no`.
    func bool(_ key: String) throws(WireError) -> Bool {
        switch try string(key) {
        case "yes": return true
        case "no": return false
        default: throw WireError(.badArgument, "\(kind): \(key)= must be yes or no")
        }
    }

    /// A required field that must be one of `allowed`.
    func oneOf(_ key: String, _ allowed: [String]) throws(WireError) -> String {
        let value = try string(key)
        guard allowed.contains(value) else {
            throw WireError(.badArgument, "\(kind): \(key)= must be one of \(allowed.joined(separator: "|"))")
        }
        return value
    }

    /// The first positional text, required.
    func requiredText() throws(WireError) -> String {
        guard let text else { throw WireError(.badArgument, "\(kind): missing quoted text") }
        return text
    }
}

/// Short field builders so the typed events read like their line format.
extension Event.Field {
    /// A number with `decimals` places.
    public static func number(_ key: String, _ value: Double, _ decimals: Int) -> Event.Field {
        Event.Field(key: key, value: NumberFormat.string(value, decimals: decimals), shape: .number)
    }

    /// A number with `decimals` places, or `-` (null in JSON) when absent.
    public static func number(_ key: String, _ value: Double?, _ decimals: Int) -> Event.Field {
        Event.Field(key: key, value: NumberFormat.string(value, decimals: decimals), shape: .number)
    }

    /// Numbers with `decimals` places, each `-` when absent, joined by commas (a JSON array, null for `-`).
    public static func numbers(_ key: String, _ values: [Double?], _ decimals: Int) -> Event.Field {
        Event.Field(key: key, value: values.map { NumberFormat.string($0, decimals: decimals) }.joined(separator: ","),
                    shape: .numbers)
    }

    /// A whole number.
    public static func integer(_ key: String, _ value: Int64) -> Event.Field {
        Event.Field(key: key, value: String(value), shape: .number)
    }

    /// A whole number.
    public static func integer(_ key: String, _ value: Int) -> Event.Field {
        Event.Field(key: key, value: String(value), shape: .number)
    }

    /// `yes` or `no` (true or false in JSON).
    public static func yesNo(_ key: String, _ value: Bool) -> Event.Field {
        Event.Field(key: key, value: value ? "yes" : "no", shape: .flag)
    }

    /// A text that is `-` when absent (null in JSON).
    static func textOrDash(_ key: String, _ value: String?) -> Event.Field {
        Event.Field(key: key, value: value ?? "-", shape: .textOrDash)
    }

    /// A text that is `no` when absent (null in JSON).
    static func textOrNo(_ key: String, _ value: String?) -> Event.Field {
        Event.Field(key: key, value: value ?? "no", shape: .textOrNo)
    }
}
