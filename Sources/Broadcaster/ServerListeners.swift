import LiveCore
import Glibc
import Reactor

/// A server's listening sockets, bound before the server is made.
///
/// Why apart from ``Server``: `moonrunner serve` binds both ports before it opens the store, so a port that
/// is taken is reported before a database file is created or opened (a new user's first try left an empty
/// `moonrunner.sqlite` behind and an error that did not say which port).
public struct ServerListeners: Sendable {
    /// The line-protocol listener.
    public let line: ListeningSocket
    /// The HTTP listener, nil when HTTP is off.
    public let http: ListeningSocket?

    /// Binds the configuration's line-protocol port, then its HTTP port (unless HTTP is off), on its host.
    public init(configuration: ServerConfiguration) throws(ListenError) {
        line = try Self.listen(.line, host: configuration.host, port: configuration.port)
        if let port = configuration.httpPort {
            http = try Self.listen(.http, host: configuration.host, port: port)
        } else {
            http = nil
        }
    }

    private static func listen(_ listener: ListenError.Listener, host: String, port: UInt16) throws(ListenError)
        -> ListeningSocket {
        do {
            return try ListeningSocket(host: host, port: port)
        } catch {
            throw ListenError(listener: listener, host: host, port: port, cause: error)
        }
    }
}

/// A port a server could not listen on: which one, and the system's reason.
public struct ListenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server's two listeners.
    public enum Listener: Sendable, Hashable {
        /// The line-protocol port (`ServerConfiguration.port`).
        case line
        /// The HTTP port (`ServerConfiguration.httpPort`).
        case http
    }

    /// Which listener failed.
    public var listener: Listener
    /// The address it was to listen on.
    public var host: String
    /// The port asked for.
    public var port: UInt16
    /// The failed call.
    public var cause: IOError

    /// True when another socket already listens on the port (`EADDRINUSE`): another server, or this one
    /// started twice.
    public var isPortTaken: Bool { cause.errno == EADDRINUSE }

    /// E.g. `HTTP port 8080 on 127.0.0.1: bind: Address already in use (errno 98)`.
    public var description: String {
        "\(listener == .http ? "HTTP port" : "port") \(port) on \(host): \(cause)"
    }
}
