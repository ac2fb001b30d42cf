/// The JSON form of events, for the web page's Server-Sent Events and JSON API.
///
/// It is written from the same field list as the line (`WireEvent.event`), so the two can't disagree:
/// `pace:ann dist=12.40 pace=- next=mars` is `{"kind":"pace","runner":"ann","dist":12.40,"pace":null,
/// "next":"mars"}`. Each field keeps its key and its text; the field's `shape` only decides the JSON
/// type: numbers stay numbers with the line's decimals, `-` (and `no` for board dates) become null,
/// `yes`/`no` flags become true/false, and a positional text is under `text`. A field named like a key of the
/// object's own (`kind`, the subject's key) is under the event's kind word instead, so that it is not lost:
/// `alert:ann kind=off_pace …` is `{"kind":"alert","runner":"ann","alert":"off_pace",…}`.
extension Event {
    /// Appends one JSON object: `kind`, the subject under `subjectKey`, then every field in order under its
    /// JSON key, `jsonKey(of:subjectKey:)` (a key already written is skipped, so the object never has
    /// duplicate names).
    public func appendJSON(to buffer: inout [UInt8], subjectKey: String = "runner") {
        buffer.append(contentsOf: #"{"kind":"#.utf8)
        JSONSyntax.appendString(kind, to: &buffer)
        buffer.append(UInt8(ascii: ","))
        JSONSyntax.appendString(subjectKey, to: &buffer)
        buffer.append(UInt8(ascii: ":"))
        JSONSyntax.appendString(subject, to: &buffer)
        for (index, field) in fields.enumerated() {
            let key = jsonKey(of: field, subjectKey: subjectKey)
            // Events have about ten fields: a scan of the earlier ones beats building a set.
            if key == "kind" || key == subjectKey
                || fields[..<index].contains(where: { jsonKey(of: $0, subjectKey: subjectKey) == key }) {
                continue
            }
            buffer.append(UInt8(ascii: ","))
            JSONSyntax.appendString(key, to: &buffer)
            buffer.append(UInt8(ascii: ":"))
            JSONSyntax.appendValue(field, to: &buffer)
        }
        buffer.append(UInt8(ascii: "}"))
    }

    /// The key a field has in the JSON object: its own, `text` for a positional text, and the event's kind
    /// word for a field named `kind` or `subjectKey` (the line's `kind=` of an alert would otherwise collide
    /// with the event's `kind`, and every alert would read as just `"kind":"alert"`).
    func jsonKey(of field: Field, subjectKey: String = "runner") -> String {
        let key = field.key ?? "text"
        return key == "kind" || key == subjectKey ? kind : key
    }

    /// The JSON object as a string.
    public func json(subjectKey: String = "runner") -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(192)
        appendJSON(to: &bytes, subjectKey: subjectKey)
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension WireEvent {
    /// Appends the event's JSON object (no newline).
    public func appendJSON(to buffer: inout [UInt8]) {
        event.appendJSON(to: &buffer, subjectKey: Self.subjectKey)
    }

    /// The event's JSON object.
    public var json: String { event.json(subjectKey: Self.subjectKey) }
}

extension ServerEvent {
    /// Appends the event's JSON object (no newline).
    public func appendJSON(to buffer: inout [UInt8]) {
        payload.appendJSON(to: &buffer)
    }

    /// The event's JSON object.
    public var json: String { payload.json }
}

/// JSON's string and number syntax (RFC 8259), by hand like the rest of Wire's formatting. Public so the
/// server's JSON answers escape text the same way.
public enum JSONSyntax {
    static func appendValue(_ field: Event.Field, to buffer: inout [UInt8]) {
        switch field.shape {
        case .number where field.value == "-", .textOrDash where field.value == "-", .textOrNo where field.value == "no":
            buffer.append(contentsOf: "null".utf8)
        case .number where isNumber(field.value):
            buffer.append(contentsOf: field.value.utf8)
        case .numbers:
            buffer.append(UInt8(ascii: "["))
            for (index, item) in field.value.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
                if index > 0 { buffer.append(UInt8(ascii: ",")) }
                // Anything but a number (`-`, or a value that doesn't fit) is null: the array stays valid JSON.
                if isNumber(String(item)) { buffer.append(contentsOf: item.utf8) } else { buffer.append(contentsOf: "null".utf8) }
            }
            buffer.append(UInt8(ascii: "]"))
        case .flag where field.value == "yes":
            buffer.append(contentsOf: "true".utf8)
        case .flag where field.value == "no":
            buffer.append(contentsOf: "false".utf8)
        default:
            // Text, or a value that doesn't fit its shape: a string never produces invalid JSON.
            appendString(field.value, to: &buffer)
        }
    }

    /// The wire's decimal grammar `-?[0-9]+(\.[0-9]+)?` is also valid JSON (JSON allows no `+`,
    /// leading `.` or `1.`); leading zeros like `007` are not, so they are strings.
    static func isNumber(_ text: String) -> Bool {
        var bytes = text.utf8[...]
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        let integer = bytes.prefix { ($0 &- 48) < 10 }
        guard !integer.isEmpty, integer.count == 1 || integer.first != UInt8(ascii: "0") else { return false }
        bytes = bytes.dropFirst(integer.count)
        guard let point = bytes.first else { return true }
        guard point == UInt8(ascii: ".") else { return false }
        let fraction = bytes.dropFirst()
        return !fraction.isEmpty && fraction.allSatisfy { ($0 &- 48) < 10 }
    }

    /// `"…"` with `"` and `\` escaped, controls as `\n`, `\r`, `\t` or `\u00XX`, and the rest as UTF-8.
    public static func appendString(_ text: String, to buffer: inout [UInt8]) {
        EventSyntax.appendQuoted(text, otherControls: .unicodeEscaped, to: &buffer)
    }
}
