/// The user and password of `Authorization: Basic base64(user:password)` (RFC 7617, UTF-8).
public struct HTTPBasicCredentials: Sendable, Hashable {
    /// The user id: everything before the first colon.
    public var user: String
    /// The password: everything after the first colon (may contain colons).
    public var password: String

    /// Creates credentials.
    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// Reads an `Authorization` value; nil unless the scheme is `Basic` (any case), the token is valid
    /// base64 (padding optional), and it decodes to UTF-8 text with a colon and no control characters.
    public init?(authorization value: String) {
        let parts = value.utf8.split(separator: ASCII.space, maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, ASCII.equalIgnoringCase(parts[0], "basic"),
              let decoded = Base64.decode(parts[1].drop { ASCII.isWhitespace($0) }),
              !decoded.contains(where: { $0 < 0x20 || $0 == 0x7F }),
              let colon = decoded.firstIndex(of: UInt8(ascii: ":")),
              let user = String(validating: decoded[..<colon], as: UTF8.self),
              let password = String(validating: decoded[(colon + 1)...], as: UTF8.self) else { return nil }
        self.init(user: user, password: password)
    }

    /// The `Authorization` value for these credentials.
    public var authorization: String {
        "Basic " + Base64.encode(Array((user + ":" + password).utf8))
    }
}

/// Standard base64 (RFC 4648 §4), written here because the HTTP target has no dependencies.
public enum Base64 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Encodes with `=` padding.
    public static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var group = UInt32(bytes[index]) << 16
            if count > 1 { group |= UInt32(bytes[index + 1]) << 8 }
            if count > 2 { group |= UInt32(bytes[index + 2]) }
            for position in 0..<4 {
                output.append(position <= count
                    ? alphabet[Int((group >> UInt32(18 - 6 * position)) & 0x3F)] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes; nil for characters outside the alphabet, misplaced padding, a length that cannot be
    /// base64, or non-zero bits left over in the last character.
    public static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        var symbols = Array(text)
        var padding = 0
        while symbols.last == UInt8(ascii: "=") && padding < 2 {
            symbols.removeLast()
            padding += 1
        }
        guard padding == 0 || (symbols.count + padding) % 4 == 0, symbols.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(symbols.count * 3 / 4)
        var group: UInt32 = 0
        var bits = 0
        for symbol in symbols {
            guard let value = sextet(symbol) else { return nil }
            group = group << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: group >> UInt32(bits)))
                group &= (1 << UInt32(bits)) - 1
            }
        }
        guard group == 0 else { return nil }
        return output
    }

    @inline(__always) static func sextet(_ symbol: UInt8) -> UInt8? {
        switch symbol {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return symbol - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return symbol - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return symbol - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): return 62
        case UInt8(ascii: "/"): return 63
        default: return nil
        }
    }
}
