/// One Redis reply as Swift values (RESP2, what ``RESPParser`` reads).
package enum RedisValue: Sendable, Equatable {
    /// A bulk string (binary-safe).
    case string([UInt8])
    /// A status reply (`+OK`).
    case status(String)
    case integer(Int64)
    /// A nil bulk or nil array (`$-1`, `*-1`): a key that is not there, an XREAD that timed out.
    case null
    case array([RedisValue])
    /// An error reply (`-ERR …`): Redis refused this one command; the connection is fine.
    case error(String)

    /// The value of a string or status reply as text (nil for other kinds).
    package var text: String? {
        switch self {
        case .string(let bytes): String(decoding: bytes, as: UTF8.self)
        case .status(let text): text
        default: nil
        }
    }

    /// The elements of an array reply (nil for other kinds).
    package var elements: [RedisValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }
}
