/// A Redis stream entry id, `MILLISECONDS-SEQUENCE`: ids grow within a stream, so comparing two tells which
/// came first. The server uses an entry's id as the SSE `id` of the event it carries.
public struct StreamID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The milliseconds part (Redis's clock when it added the entry, or the id given to `XADD`).
    public let milliseconds: UInt64
    /// The sequence within that millisecond.
    public let sequence: UInt64

    /// `0-0`: before every entry (reading after it reads a stream from its start).
    public static let zero = StreamID(milliseconds: 0, sequence: 0)

    /// The id `milliseconds-sequence`.
    public init(milliseconds: UInt64, sequence: UInt64) {
        self.milliseconds = milliseconds
        self.sequence = sequence
    }

    /// Parses `MS-SEQ` (or a bare `MS`, as Redis accepts); nil for anything else.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let milliseconds = UInt64(parts[0]) else { return nil }
        let sequence = parts.count == 2 ? UInt64(parts[1]) : 0
        guard let sequence else { return nil }
        self.init(milliseconds: milliseconds, sequence: sequence)
    }

    public static func < (lhs: StreamID, rhs: StreamID) -> Bool {
        (lhs.milliseconds, lhs.sequence) < (rhs.milliseconds, rhs.sequence)
    }

    /// `MS-SEQ`, as Redis writes it.
    public var description: String { "\(milliseconds)-\(sequence)" }
}

/// Where a new subscription starts reading.
public enum StreamPosition: Sendable, Equatable {
    /// Everything the stream still holds (it keeps about `MAXLEN` entries), then what comes.
    case beginning
    /// What is added after the reader takes the subscription up (a round trip or so after ``ClusterBus/subscribe(_:from:)``;
    /// ``ClusterBus/awaitSubscriptions(timeout:)`` waits for that).
    case new
    /// Entries after this id (a position kept from before, e.g. an SSE client's `Last-Event-ID`).
    case after(StreamID)
}

/// One entry read from a stream: where it came from, its id, the node that published it and its fields.
public struct BusEntry: Sendable {
    /// The stream it was read from.
    public let stream: String
    /// Its id in that stream (the same in its own stream and in the stream it was also added to, see
    /// ``ClusterBus/publish(stream:fields:alsoTo:)``): the stream entry's id, or for one of the several entries
    /// a stream entry packs, one of the ids reserved below it (``PublishScript``); ids grow within a stream.
    public let id: StreamID
    /// The node that published it (``ClusterBusConfiguration/node`` there); never this node: echoes are dropped.
    public let node: String
    /// The fields as published, in order (without the bus's own node field).
    public let fields: [(String, [UInt8])]

    /// An entry (the bus makes them; public for tests of code that consumes them).
    public init(stream: String, id: StreamID, node: String, fields: [(String, [UInt8])]) {
        self.stream = stream
        self.id = id
        self.node = node
        self.fields = fields
    }

    /// The value of the first field called `name`.
    public subscript(name: String) -> [UInt8]? {
        fields.first { $0.0 == name }?.1
    }
}
