import CHiredis

/// One Redis reply as Swift values (RESP2, what hiredis 0.14 speaks), copied out of hiredis's `redisReply`
/// tree so that the tree can be freed at once.
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

/// Owns one reply tree from hiredis: freed with `freeReplyObject` when this goes away, whatever happens
/// while it is being read.
final class OwnedReply {
    private let pointer: UnsafeMutablePointer<redisReply>

    /// Takes ownership of what `redisGetReply` or `redisCommandArgv` returned.
    init(_ raw: UnsafeMutableRawPointer) {
        pointer = raw.assumingMemoryBound(to: redisReply.self)
    }

    deinit { freeReplyObject(pointer) }

    /// The whole tree as Swift values.
    var value: RedisValue { Self.convert(pointer) }

    private static func convert(_ reply: UnsafeMutablePointer<redisReply>) -> RedisValue {
        let node = reply.pointee
        switch node.type {
        case REDIS_REPLY_STRING:
            return .string(bytes(node.str, node.len))
        case REDIS_REPLY_STATUS:
            return .status(String(decoding: bytes(node.str, node.len), as: UTF8.self))
        case REDIS_REPLY_ERROR:
            return .error(String(decoding: bytes(node.str, node.len), as: UTF8.self))
        case REDIS_REPLY_INTEGER:
            return .integer(node.integer)
        case REDIS_REPLY_ARRAY:
            guard let elements = node.element else { return .array([]) }
            return .array((0..<node.elements).map { index in
                elements[index].map(convert) ?? .null
            })
        default:
            return .null  // REDIS_REPLY_NIL
        }
    }

    private static func bytes(_ pointer: UnsafeMutablePointer<CChar>?, _ count: Int) -> [UInt8] {
        guard let pointer, count > 0 else { return [] }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: count) { Array(UnsafeBufferPointer(start: $0, count: count)) }
    }
}
