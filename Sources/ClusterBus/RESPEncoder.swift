/// Writes commands as Redis reads them: an array of bulk strings (`*2\r\n$3\r\nGET\r\n$1\r\nk\r\n`),
/// binary-safe, appended to a buffer that a whole pipeline shares (one write for many commands).
package enum RESPEncoder {
    /// Appends `arguments` (the command's name first) to `buffer` as one RESP2 command.
    package static func append(_ arguments: [[UInt8]], to buffer: inout [UInt8]) {
        precondition(!arguments.isEmpty, "an empty command")
        buffer.reserveCapacity(buffer.count + arguments.reduce(16) { $0 + $1.count + 16 })
        appendHeader(UInt8(ascii: "*"), arguments.count, to: &buffer)
        for argument in arguments {
            appendHeader(UInt8(ascii: "$"), argument.count, to: &buffer)
            buffer.append(contentsOf: argument)
            buffer.append(13)
            buffer.append(10)
        }
    }

    /// `*N\r\n` or `$N\r\n`, the count's digits written without making a String.
    private static func appendHeader(_ type: UInt8, _ count: Int, to buffer: inout [UInt8]) {
        buffer.append(type)
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                      UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var used = 0
        var rest = UInt(count)
        withUnsafeMutableBytes(of: &digits) { place in
            repeat {
                place[19 - used] = UInt8(truncatingIfNeeded: rest % 10) + 48
                used += 1
                rest /= 10
            } while rest > 0
            buffer.append(contentsOf: place[(20 - used)...])
        }
        buffer.append(13)
        buffer.append(10)
    }
}
