extension PaceEvent {
    /// Appends the JSON object without building an `Event`, as `append(to:)` does for the line: SSE
    /// watchers need one per fix. Produces exactly the bytes of `event.appendJSON(to:)` (a test checks this).
    public func appendJSON(to buffer: inout [UInt8]) {
        let next = nextBadge ?? "-"
        // On a course (`along`, `togo`, `next_point`…) the generic form writes it, as `append(to:)` does the line.
        guard course == nil, JSONSyntax.isPlain(runner), JSONSyntax.isPlain(timestamp), JSONSyntax.isPlain(next) else {
            event.appendJSON(to: &buffer, subjectKey: Self.subjectKey)  // texts that need escaping: not the hot path
            return
        }
        let capacity = 200 + 10 * NumberFormat.maximumWrittenLength + runner.utf8.count + timestamp.utf8.count
            + next.utf8.count
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { scratch in
            var writer = ByteWriter(base: scratch.baseAddress!)
            writer.write(#"{"kind":"pace","runner":""#)
            writer.write(runner)
            writer.write(#"","dist":"#, distance, NumberFormat.distanceDecimals)
            writer.write(#","time":"#, elapsed, NumberFormat.timeDecimals)
            writer.write(#","moving":"#, moving, NumberFormat.timeDecimals)
            writer.writeJSON(#","pace":"#, pace, NumberFormat.paceDecimals)
            writer.writeJSON(#","cur":"#, current, NumberFormat.paceDecimals)
            writer.writeJSON(#","lat":"#, latitude, NumberFormat.coordinateDecimals)
            writer.writeJSON(#","lon":"#, longitude, NumberFormat.coordinateDecimals)
            writer.write(#","ts":""#)
            writer.write(timestamp)
            if let nextBadge {
                writer.write(#"","next":""#)
                writer.write(nextBadge)
                writer.write(#"","left":"#)
            } else {
                writer.write(#"","next":null,"left":"#)
            }
            writer.write(left, NumberFormat.distanceDecimals)
            if let forecast {
                writer.writeJSON(#","eta":"#, forecast.eta, 0)
                writer.writeJSON(#","finish":"#, forecast.finish, NumberFormat.timeDecimals)
                writer.writeJSON(#","next_eta":"#, forecast.nextETA, 0)
            }
            writer.write("}")
            buffer.append(contentsOf: UnsafeBufferPointer(start: scratch.baseAddress, count: writer.count))
        }
    }
}

extension ByteWriter {
    /// A number, or `null` for nil.
    @inline(__always) mutating func writeJSON(_ value: Double?, _ decimals: Int) {
        if let value { write(value, decimals) } else { write("null") }
    }

    /// A field: its label, then its number (`null` for nil).
    @inline(__always) mutating func writeJSON(_ label: StaticString, _ value: Double?, _ decimals: Int) {
        write(label)
        writeJSON(value, decimals)
    }
}

extension JSONSyntax {
    /// True when `text` goes into a JSON string as is: no `"`, `\` or control characters, and not `-`
    /// (which the generic path writes as null for `next`).
    static func isPlain(_ text: String) -> Bool {
        text != "-" && text.utf8.allSatisfy { $0 >= 0x20 && $0 != 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
    }
}
