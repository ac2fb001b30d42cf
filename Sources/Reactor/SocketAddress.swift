import CEpoll
import Glibc

/// An IPv4 or IPv6 socket address, as name resolution gives them (``AddressResolver``).
///
/// Kept as the raw `sockaddr_in`/`sockaddr_in6` bytes so it is a plain value: `Sendable`, `Hashable`, and
/// handed to the kernel as it is.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    /// `AF_INET` or `AF_INET6`.
    public let family: Int32
    /// The `sockaddr_in` or `sockaddr_in6`, byte for byte.
    let bytes: [UInt8]

    /// Copies `length` bytes of an IPv4 or IPv6 `sockaddr`; nil for another family.
    init?(_ address: UnsafePointer<sockaddr>, length: socklen_t) {
        let family = Int32(address.pointee.sa_family)
        let expected = family == AF_INET ? MemoryLayout<sockaddr_in>.size
            : family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : 0
        guard expected > 0, Int(length) >= expected else { return nil }
        self.family = family
        bytes = Array(UnsafeRawBufferPointer(start: address, count: expected))
    }

    /// The address of a numeric IPv4 (`127.0.0.1`) or IPv6 (`::1`) host; nil for anything else (a name).
    init?(numericHost host: String, port: UInt16) {
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            family = AF_INET
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = sockaddr_in6()
        guard inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 else { return nil }
        v6.sin6_family = sa_family_t(AF_INET6)
        v6.sin6_port = port.bigEndian
        family = AF_INET6
        bytes = withUnsafeBytes(of: &v6) { Array($0) }
    }

    /// True for an IPv6 address.
    public var isIPv6: Bool { family == AF_INET6 }

    /// The port.
    public var port: UInt16 {
        bytes.withUnsafeBytes { raw in
            isIPv6 ? UInt16(bigEndian: raw.loadUnaligned(as: sockaddr_in6.self).sin6_port)
                : UInt16(bigEndian: raw.loadUnaligned(as: sockaddr_in.self).sin_port)
        }
    }

    /// `127.0.0.1:4242` or `[::1]:4242`.
    public var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let written: Bool = bytes.withUnsafeBytes { raw in
            if isIPv6 {
                var address = raw.loadUnaligned(as: sockaddr_in6.self).sin6_addr
                return inet_ntop(AF_INET6, &address, &text, socklen_t(text.count)) != nil
            }
            var address = raw.loadUnaligned(as: sockaddr_in.self).sin_addr
            return inet_ntop(AF_INET, &address, &text, socklen_t(text.count)) != nil
        }
        let host = written ? text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } : "?"
        return isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Calls `body` with the address as the kernel takes it.
    func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        bytes.withUnsafeBytes { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
    }
}
