/// Host names to socket addresses, for clients (the server binds numeric addresses).
///
/// Resolution is `getaddrinfo`, which blocks — for seconds when DNS is slow — so call it off any event loop
/// (the client library resolves on a Dispatch worker, never on its I/O thread).
public enum AddressResolver {
    /// The TCP addresses of `host` (a name, a numeric IPv4 address, or an IPv6 one, with or without
    /// brackets) at `port`, in the order the system prefers them (RFC 6724), without duplicates.
    /// A name that does not resolve throws an ``IOError`` whose operation names the host and the resolver's
    /// reason (e.g. `Name or service not known`).
    public static func addresses(host: String, port: UInt16) throws(IOError) -> [SocketAddress] {
        var name = Substring(host)
        if name.hasPrefix("["), name.hasSuffix("]") { name = name.dropFirst().dropLast() }
        var unique: [SocketAddress] = []
        for address in try Syscall.resolve(host: String(name), port: port) where !unique.contains(address) {
            unique.append(address)
        }
        return unique
    }
}
