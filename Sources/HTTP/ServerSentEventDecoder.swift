/// Reads a `text/event-stream` as a browser does (WHATWG HTML §9.2.6), incrementally: for tests and
/// for load-test clients, so what the server writes is checked against the standard's reading.
public struct ServerSentEventDecoder: Sendable {
    /// One dispatched event.
    public struct Message: Sendable, Hashable {
        /// The event type (`message` when no `event:` field was given).
        public var event: String
        /// The data lines joined with LF.
        public var data: String
        /// The last event id at dispatch (ids persist across events, as in the browser).
        public var lastEventID: String
    }

    /// The id the browser would send as `Last-Event-ID` on reconnect.
    public private(set) var lastEventID = ""
    /// The last valid `retry:` in milliseconds.
    public private(set) var retry: Int?
    /// Comment lines seen (heartbeats), without the colon.
    public private(set) var commentCount = 0

    private var line: [UInt8] = []
    private var skipLF = false
    private var atStart = true
    private var eventType = ""
    private var data: [UInt8] = []
    private var hasData = false

    /// Creates a decoder at the start of a stream.
    public init() {}

    /// Feeds bytes; returns the events they completed, in order.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [Message] {
        var messages: [Message] = []
        for byte in bytes {
            if skipLF {
                skipLF = false
                if byte == ASCII.lf { continue }
            }
            if byte == ASCII.cr || byte == ASCII.lf {
                skipLF = byte == ASCII.cr
                if let message = process(line) { messages.append(message) }
                line.removeAll(keepingCapacity: true)
            } else {
                line.append(byte)
            }
        }
        return messages
    }

    private mutating func process(_ rawLine: [UInt8]) -> Message? {
        var line = rawLine[...]
        if atStart {
            atStart = false
            if line.starts(with: [0xEF, 0xBB, 0xBF]) { line = line.dropFirst(3) }
        }
        if line.isEmpty { return dispatch() }
        if line.first == UInt8(ascii: ":") {
            commentCount += 1
            return nil
        }
        let colon = line.firstIndex(of: UInt8(ascii: ":"))
        let name = String(decoding: line[..<(colon ?? line.endIndex)], as: UTF8.self)
        var value = colon.map { line[line.index(after: $0)...] } ?? []
        if value.first == ASCII.space { value = value.dropFirst() }
        switch name {
        case "event": eventType = String(decoding: value, as: UTF8.self)
        case "data":
            if hasData { data.append(ASCII.lf) }
            data.append(contentsOf: value)
            hasData = true
        case "id" where !value.contains(0): lastEventID = String(decoding: value, as: UTF8.self)
        case "retry" where !value.isEmpty && value.allSatisfy({ ($0 &- UInt8(ascii: "0")) < 10 }):
            retry = Int(String(decoding: value, as: UTF8.self))
        default: break
        }
        return nil
    }

    private mutating func dispatch() -> Message? {
        defer {
            eventType = ""
            data.removeAll(keepingCapacity: true)
            hasData = false
        }
        guard hasData else { return nil }
        return Message(event: eventType.isEmpty ? "message" : eventType, data: String(decoding: data, as: UTF8.self),
                       lastEventID: lastEventID)
    }
}
