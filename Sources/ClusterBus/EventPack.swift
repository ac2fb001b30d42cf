/// How the events one stream entry packs are written into its one value (``PublishScript/packField``): Redis
/// stores and copies that value as it is, so the cost of an entry in Redis hardly grows with the events in it
/// (fields of their own would cost it a listpack element each, twice: the stream and the also-to stream).
///
/// Each event: a 2-byte field count, then per field a 1-byte name length, the name, a 4-byte value length and
/// the value (lengths big-endian). Strict: bytes that do not decode whole, to the last byte, with every name
/// UTF-8, decode to nothing (a node of another version, or a damaged entry, is skipped, never half read); what
/// decodes writes back the same bytes (fuzzed with the RESP reader, `RESPFuzzing`).
enum EventPack {
    /// Appends one event's fields to `pack`. Names are the bus users' own short constants (at most 255 bytes).
    static func append(_ fields: [(String, [UInt8])], to pack: inout [UInt8]) {
        precondition(fields.count <= Int(UInt16.max), "an event of \(fields.count) fields")
        pack.append(UInt8(truncatingIfNeeded: fields.count >> 8))
        pack.append(UInt8(truncatingIfNeeded: fields.count))
        for (name, value) in fields {
            let nameBytes = name.utf8
            precondition(nameBytes.count <= 255, "a field name of \(nameBytes.count) bytes")
            precondition(value.count <= Int(UInt32.max), "a field value of \(value.count) bytes")
            pack.append(UInt8(nameBytes.count))
            pack.append(contentsOf: nameBytes)
            for shift in stride(from: 24, through: 0, by: -8) { pack.append(UInt8(truncatingIfNeeded: value.count >> shift)) }
            pack.append(contentsOf: value)
        }
    }

    /// The events of a pack, in order; nil unless `pack` is whole events to its last byte.
    static func decode(_ pack: [UInt8]) -> [[(String, [UInt8])]]? {
        var events: [[(String, [UInt8])]] = []
        var fields: [(String, [UInt8])] = []
        let whole = walk(pack, field: { name, value in
            guard let text = String(validating: pack[name], as: UTF8.self) else { return false }
            fields.append((text, Array(pack[value])))
            return true
        }, endOfEvent: {
            events.append(fields)
            fields = []
        })
        return whole ? events : nil
    }

    /// How many events a pack holds, without making them (an echo is counted, not read); nil as for ``decode(_:)``
    /// but for names that are not UTF-8.
    static func count(_ pack: [UInt8]) -> Int? {
        var events = 0
        return walk(pack, field: { _, _ in true }, endOfEvent: { events += 1 }) ? events : nil
    }

    /// Goes through a pack: each field's name and value ranges to `field` (false stops: not whole), then
    /// `endOfEvent` after each event. True when the pack was whole events to its last byte.
    private static func walk(_ pack: [UInt8], field: (Range<Int>, Range<Int>) -> Bool, endOfEvent: () -> Void) -> Bool {
        var at = 0
        func take(_ count: Int) -> Range<Int>? {
            guard count <= pack.count - at else { return nil }
            defer { at += count }
            return at..<(at + count)
        }
        while at < pack.count {
            guard let countBytes = take(2) else { return false }
            let fieldCount = Int(pack[countBytes.lowerBound]) << 8 | Int(pack[countBytes.lowerBound + 1])
            for _ in 0..<fieldCount {
                guard let nameLength = take(1), let name = take(Int(pack[nameLength.lowerBound])),
                      let lengthBytes = take(4) else { return false }
                let length = pack[lengthBytes].reduce(0) { $0 << 8 | Int($1) }
                guard let value = take(length), field(name, value) else { return false }
            }
            endOfEvent()
        }
        return true
    }
}
