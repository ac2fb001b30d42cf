/// Why a request could not be read: the status to answer with and a reason for the text/plain body.
///
/// A parser that has thrown one is finished: the framing of anything after the bad request is unknown,
/// so the server answers `HTTPResponse.error(_:)` (which says `Connection: close`) and closes.
public struct HTTPError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The answer's status: 400, 413, 431, 501 or 505 from the parser.
    public var status: HTTPStatus
    /// One human sentence, without a trailing newline.
    public var reason: String

    /// Creates an error.
    public init(_ status: HTTPStatus, _ reason: String) {
        self.status = status
        self.reason = reason
    }

    /// `400 Bad Request: reason`.
    public var description: String { "\(status): \(reason)" }

    static func malformed(_ reason: String) -> HTTPError { HTTPError(.badRequest, reason) }
}
