/// One Server-Sent Event as written on a `text/event-stream` (WHATWG HTML §9.2).
///
/// `id:` comes first so a client that loses the connection mid-stream reconnects with the last
/// complete event's id in `Last-Event-ID`; multi-line data becomes one `data:` line per line.
public struct ServerSentEvent: Sendable, Hashable {
    /// The id the browser keeps as `lastEventId`; CR, LF and NUL are dropped (they would end the
    /// field, or make the browser ignore it).
    public var id: String?
    /// The event type (`addEventListener(type, …)`); nil for the default `message`.
    public var event: String?
    /// The data; split at CRLF, CR and LF into `data:` lines, rejoined with LF by the browser.
    public var data: String
    /// A reconnection delay in milliseconds for the browser to adopt.
    public var retry: Int?

    /// Creates an event.
    public init(id: String? = nil, event: String? = nil, data: String, retry: Int? = nil) {
        self.id = id
        self.event = event
        self.data = data
        self.retry = retry
    }

    /// Appends the event's fields and the empty line that dispatches it.
    public func append(to buffer: inout [UInt8]) {
        Self.append(id: id, event: event, data: Array(data.utf8), retry: retry, to: &buffer)
    }

    /// The encoded event.
    public var encoded: [UInt8] {
        var bytes: [UInt8] = []
        append(to: &bytes)
        return bytes
    }

    /// Appends an event whose data is already bytes (the JSON of a Wire event): no String is built.
    public static func append(id: String?, event: String?, data: some Collection<UInt8>, retry: Int? = nil,
                              to buffer: inout [UInt8]) {
        if let id { appendField("id", id, to: &buffer) }
        if let event { appendField("event", event, to: &buffer) }
        if let retry { appendField("retry", String(max(0, retry)), to: &buffer) }
        var lineStart = data.startIndex
        var index = data.startIndex
        var previousWasCR = false
        while index != data.endIndex {
            let byte = data[index]
            if byte == ASCII.lf && previousWasCR {
                // The LF of a CRLF: the line already ended at the CR.
                previousWasCR = false
                data.formIndex(after: &index)
                lineStart = index
                continue
            }
            if byte == ASCII.cr || byte == ASCII.lf {
                appendDataLine(data[lineStart..<index], to: &buffer)
                previousWasCR = byte == ASCII.cr
                data.formIndex(after: &index)
                lineStart = index
                continue
            }
            previousWasCR = false
            data.formIndex(after: &index)
        }
        appendDataLine(data[lineStart..<data.endIndex], to: &buffer)
        buffer.append(ASCII.lf)
    }

    /// Appends a comment line (`: text`) and an empty line: a heartbeat that keeps proxies and the
    /// browser's connection alive and dispatches nothing.
    public static func appendComment(_ text: String = "", to buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: ":"))
        if !text.isEmpty {
            buffer.append(ASCII.space)
            appendStripped(text, to: &buffer)
        }
        buffer.append(contentsOf: [ASCII.lf, ASCII.lf])
    }

    /// Appends `retry: MS` alone (sent once at the start of a stream).
    public static func appendRetry(milliseconds: Int, to buffer: inout [UInt8]) {
        appendField("retry", String(max(0, milliseconds)), to: &buffer)
        buffer.append(ASCII.lf)
    }

    static func appendDataLine(_ line: some Collection<UInt8>, to buffer: inout [UInt8]) {
        buffer.append(contentsOf: "data: ".utf8)
        buffer.append(contentsOf: line)
        buffer.append(ASCII.lf)
    }

    static func appendField(_ name: StaticString, _ value: String, to buffer: inout [UInt8]) {
        name.withUTF8Buffer { buffer.append(contentsOf: $0) }
        buffer.append(contentsOf: [UInt8(ascii: ":"), ASCII.space])
        appendStripped(value, to: &buffer)
        buffer.append(ASCII.lf)
    }

    static func appendStripped(_ value: String, to buffer: inout [UInt8]) {
        for byte in value.utf8 where byte != ASCII.cr && byte != ASCII.lf && byte != 0 {
            buffer.append(byte)
        }
    }
}
