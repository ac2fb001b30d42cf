import CEpoll
import Glibc

/// Parsing and printing of IPv4 socket addresses (no DNS: the server binds numeric addresses).
enum IPv4Address {
    /// A `sockaddr_in` for a dotted-quad `host` (or `"localhost"`) and `port`; `EINVAL` otherwise.
    static func make(host: String, port: UInt16) throws(IOError) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        let numeric = host == "localhost" ? "127.0.0.1" : host
        guard inet_pton(AF_INET, numeric, &address.sin_addr) == 1 else {
            throw IOError(operation: "parse IPv4 address \"\(host)\"", errno: EINVAL)
        }
        return address
    }

    /// `"127.0.0.1:53210"`.
    static func describe(_ address: sockaddr_in) -> String {
        var addr = address.sin_addr
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        guard inet_ntop(AF_INET, &addr, &text, socklen_t(text.count)) != nil else { return "?" }
        let host = text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return "\(host):\(UInt16(bigEndian: address.sin_port))"
    }
}
