/// Where Redis is: parsed from `redis://[:PASSWORD@]HOST[:PORT][/DB]` (HOST may be `[IPv6]`; PORT defaults
/// to 6379, DB to 0).
public struct RedisEndpoint: Sendable, Equatable, CustomStringConvertible {
    /// The host name or numeric address (no brackets).
    public var host: String
    /// The TCP port.
    public var port: Int
    /// The database index (`SELECT`ed after connecting when not 0).
    public var database: Int
    /// The password for `AUTH` (nil: none); never shown in ``description``.
    public var password: String?

    /// An endpoint at `host:port`.
    public init(host: String, port: Int = 6379, database: Int = 0, password: String? = nil) {
        self.host = host
        self.port = port
        self.database = database
        self.password = password
    }

    /// Parses a `redis://` URL; throws ``BusError/Kind/badURL`` for anything else.
    public init(url: String) throws(BusError) {
        guard url.hasPrefix("redis://") else { throw BusError(.badURL, "not a redis:// URL: \(url)") }
        var rest = Substring(url.dropFirst("redis://".count))
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let path = rest[rest.index(after: slash)...]
            if !path.isEmpty {
                guard let number = Int(path), number >= 0 else { throw BusError(.badURL, "bad database in \(url)") }
                database = number
            }
            rest = rest[..<slash]
        }
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let user = rest[..<at]
            // `redis://:secret@host`; a user name before the colon (ACL users) is not supported by AUTH here.
            password = user.first == ":" ? String(user.dropFirst()) : String(user)
            rest = rest[rest.index(after: at)...]
        }
        var host: Substring
        var port = 6379
        if rest.first == "[" {
            guard let close = rest.firstIndex(of: "]") else { throw BusError(.badURL, "unclosed [ in \(url)") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":", let number = Int(after.dropFirst()) else {
                    throw BusError(.badURL, "bad port in \(url)")
                }
                port = number
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            guard let number = Int(rest[rest.index(after: colon)...]) else { throw BusError(.badURL, "bad port in \(url)") }
            port = number
        } else {
            host = rest
        }
        guard !host.isEmpty else { throw BusError(.badURL, "no host in \(url)") }
        guard (1...65_535).contains(port) else { throw BusError(.badURL, "port out of range in \(url)") }
        self.init(host: String(host), port: port, database: database, password: password)
    }

    /// `redis://HOST:PORT[/DB]`, without the password.
    public var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "redis://\(shownHost):\(port)" + (database == 0 ? "" : "/\(database)")
    }
}
