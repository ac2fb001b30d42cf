/// The two versions spoken: the request's version decides the default of keep-alive.
public enum HTTPVersion: String, Sendable, Hashable {
    /// `HTTP/1.0`: closes after each response unless the client asks for `Connection: keep-alive`.
    case http10 = "HTTP/1.0"
    /// `HTTP/1.1`: stays open unless either side says `Connection: close`.
    case http11 = "HTTP/1.1"
}

/// One `name=value` pair of a query string or a form body, both percent-decoded (`+` read as a space).
public struct HTTPQueryItem: Sendable, Hashable {
    /// The decoded name.
    public var name: String
    /// The decoded value; empty for a bare `name` without `=`.
    public var value: String

    /// Creates an item.
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// A complete, validated request as the parser hands it over.
public struct HTTPRequest: Sendable, Hashable {
    /// The method token exactly as sent (methods are case-sensitive): `GET`, `POST`, …
    public var method: String
    /// The request target exactly as sent (origin-form `/a?b`, absolute-form `http://h/a?b`, or `*`).
    public var target: String
    /// The path, percent-decoded (`/` for an absolute-form target without one; `*` for asterisk-form).
    public var path: String
    /// The path's segments, split at `/` before decoding (so `%2F` stays inside its segment);
    /// `/runners/ann` gives `["runners", "ann"]`, `/` gives `[]`.
    public var pathSegments: [String]
    /// The raw query (after `?`), empty when there is none.
    public var rawQuery: String
    /// The query's items, decoded, in order.
    public var queryItems: [HTTPQueryItem]
    /// The version.
    public var version: HTTPVersion
    /// The header fields.
    public var headers: HTTPHeaders
    /// The host: the absolute-form target's authority if given (which then overrides `Host`), else
    /// the `Host` field; nil for an HTTP/1.0 request without either.
    public var host: String?
    /// The decoded body (empty when there is none).
    public var body: [UInt8]
    /// Whether the connection may carry another request after the response (version default and
    /// `Connection: close` / `keep-alive`); the server may still close.
    public var keepAlive: Bool

    /// Creates a request (the parser's result; tests build them too).
    public init(method: String, target: String, path: String, pathSegments: [String], rawQuery: String = "",
                queryItems: [HTTPQueryItem] = [], version: HTTPVersion = .http11, headers: HTTPHeaders = [:],
                host: String? = nil, body: [UInt8] = [], keepAlive: Bool = true) {
        self.method = method
        self.target = target
        self.path = path
        self.pathSegments = pathSegments
        self.rawQuery = rawQuery
        self.queryItems = queryItems
        self.version = version
        self.headers = headers
        self.host = host
        self.body = body
        self.keepAlive = keepAlive
    }

    /// The first query value named `name`.
    public func query(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }

    /// The `Last-Event-ID` a reconnecting EventSource sends, if any.
    public var lastEventID: String? { headers["Last-Event-ID"] }

    /// The media type of `Content-Type`, lowercased, without parameters (`application/x-www-form-urlencoded`).
    public var mediaType: String? {
        guard let value = headers["Content-Type"] else { return nil }
        let type = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return String(decoding: ASCII.trimmingWhitespace(type).utf8.map(ASCII.lowered), as: UTF8.self)
    }

    /// The body as UTF-8 text; nil when it is not valid UTF-8.
    public var bodyText: String? { String(validating: body, as: UTF8.self) }

    /// The body read as `application/x-www-form-urlencoded`; throws 400 for bad escapes or UTF-8.
    public func formItems() throws(HTTPError) -> [HTTPQueryItem] {
        try FormURLEncoding.items(body)
    }

    /// The `Authorization: Basic …` credentials, if present and well-formed.
    public var basicCredentials: HTTPBasicCredentials? {
        headers["Authorization"].flatMap(HTTPBasicCredentials.init(authorization:))
    }
}
