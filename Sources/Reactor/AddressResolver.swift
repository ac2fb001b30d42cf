/// Host names to socket addresses, for clients (the server binds numeric addresses).
///
/// Numeric addresses are parsed here; names go to `getaddrinfo`, which blocks — for seconds when DNS is slow —
/// so call it off any event loop (the client library resolves on a connect thread, never on its I/O thread).
public enum AddressResolver {
    /// The TCP addresses of `host` (a name, a numeric IPv4 address, or an IPv6 one, with or without
    /// brackets) at `port`, in the order the system prefers them (RFC 6724), without duplicates.
    /// A name that does not resolve throws an ``IOError`` whose operation names the host and the resolver's
    /// reason (e.g. `Name or service not known`).
    public static func addresses(host: String, port: UInt16) throws(IOError) -> [SocketAddress] {
        var name = Substring(host)
        if name.hasPrefix("["), name.hasSuffix("]") { name = name.dropFirst().dropLast() }
        // A numeric address needs no resolver (glibc's may wait behind another thread's slow DNS query).
        if let numeric = SocketAddress(numericHost: String(name), port: port) { return [numeric] }
        var unique: [SocketAddress] = []
        for address in try Syscall.resolve(host: String(name), port: port) where !unique.contains(address) {
            unique.append(address)
        }
        return unique
    }
}
