/// A response status: the code and its reason phrase.
public struct HTTPStatus: Sendable, Hashable, CustomStringConvertible {
    /// Three digits, 100...599.
    public var code: Int
    /// The reason phrase written after the code.
    public var reason: String

    /// Creates a status.
    public init(_ code: Int, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// `200 OK`, for example.
    public var description: String { "\(code) \(reason)" }

    /// 200.
    public static let ok = HTTPStatus(200, "OK")
    /// 202: a cheer was queued.
    public static let accepted = HTTPStatus(202, "Accepted")
    /// 204.
    public static let noContent = HTTPStatus(204, "No Content")
    /// 304.
    public static let notModified = HTTPStatus(304, "Not Modified")
    /// 400: malformed request; the connection is closed after the answer.
    public static let badRequest = HTTPStatus(400, "Bad Request")
    /// 401.
    public static let unauthorized = HTTPStatus(401, "Unauthorized")
    /// 403.
    public static let forbidden = HTTPStatus(403, "Forbidden")
    /// 404.
    public static let notFound = HTTPStatus(404, "Not Found")
    /// 405: the path exists but not with this method (send `Allow`).
    public static let methodNotAllowed = HTTPStatus(405, "Method Not Allowed")
    /// 408: the head did not arrive within the header timeout.
    public static let requestTimeout = HTTPStatus(408, "Request Timeout")
    /// 413: the body is larger than `HTTPLimits.maximumBodyBytes`.
    public static let contentTooLarge = HTTPStatus(413, "Content Too Large")
    /// 415.
    public static let unsupportedMediaType = HTTPStatus(415, "Unsupported Media Type")
    /// 422: well-formed but unacceptable content (e.g. an empty cheer).
    public static let unprocessableContent = HTTPStatus(422, "Unprocessable Content")
    /// 429.
    public static let tooManyRequests = HTTPStatus(429, "Too Many Requests")
    /// 431: the head is larger than `HTTPLimits.maximumHeadBytes` or has too many fields.
    public static let headerFieldsTooLarge = HTTPStatus(431, "Request Header Fields Too Large")
    /// 500.
    public static let internalServerError = HTTPStatus(500, "Internal Server Error")
    /// 501: a transfer coding (or method) the server does not implement.
    public static let notImplemented = HTTPStatus(501, "Not Implemented")
    /// 503: too many connections, or shutting down.
    public static let serviceUnavailable = HTTPStatus(503, "Service Unavailable")
    /// 505: an HTTP version other than 1.0 and 1.1.
    public static let httpVersionNotSupported = HTTPStatus(505, "HTTP Version Not Supported")

    /// Every status above, for documentation checks.
    public static let all: [HTTPStatus] = [
        .ok, .accepted, .noContent, .notModified, .badRequest, .unauthorized, .forbidden, .notFound, .methodNotAllowed,
        .requestTimeout, .contentTooLarge, .unsupportedMediaType, .unprocessableContent, .tooManyRequests,
        .headerFieldsTooLarge, .internalServerError, .notImplemented, .serviceUnavailable, .httpVersionNotSupported,
    ]
}
