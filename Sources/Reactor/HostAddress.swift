import CEpoll
import Glibc

/// A peer's IP address without its port, for per-address limits: 16 bytes held inline (no allocation per
/// connection), IPv4 kept as its IPv4-mapped IPv6 form (`::ffff:a.b.c.d`), so one client counts as one
/// whether a plain IPv4 listener or a dual-stack `::` one accepted it.
public struct HostAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address's first and last 8 bytes, in network order as they were read.
    let high: UInt64
    let low: UInt64

    /// The host of an IPv4 or IPv6 socket address (its port dropped).
    public init(_ address: SocketAddress) {
        var bytes = [UInt8](repeating: 0, count: 16)
        address.bytes.withUnsafeBytes { raw in
            if address.isIPv6 {
                var v6 = raw.loadUnaligned(as: sockaddr_in6.self).sin6_addr
                withUnsafeBytes(of: &v6) { bytes.replaceSubrange(0..<16, with: $0) }
            } else {
                var v4 = raw.loadUnaligned(as: sockaddr_in.self).sin_addr
                bytes[10] = 0xFF
                bytes[11] = 0xFF
                withUnsafeBytes(of: &v4) { bytes.replaceSubrange(12..<16, with: $0) }
            }
        }
        high = bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        low = bytes[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// True for an IPv4 address (held IPv4-mapped).
    public var isIPv4: Bool { high == 0 && low >> 32 == 0xFFFF }

    /// True for loopback: 127.0.0.0/8 or ::1.
    public var isLoopback: Bool {
        isIPv4 ? UInt32(truncatingIfNeeded: low) >> 24 == 127 : high == 0 && low == 1
    }

    /// `127.0.0.1` for IPv4 (mapped or not), `::1` for IPv6.
    public var description: String {
        if isIPv4 {
            let value = UInt32(truncatingIfNeeded: low)
            return "\(value >> 24).\(value >> 16 & 0xFF).\(value >> 8 & 0xFF).\(value & 0xFF)"
        }
        var address = in6_addr()
        withUnsafeMutableBytes(of: &address) { raw in
            for index in 0..<8 {
                raw[index] = UInt8(truncatingIfNeeded: high >> UInt64(56 - 8 * index))
                raw[8 + index] = UInt8(truncatingIfNeeded: low >> UInt64(56 - 8 * index))
            }
        }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &address, &text, socklen_t(text.count)) != nil else { return "?" }
        return text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
