import LiveCore
import HTTP

/// The headers that keep a browser from reading our answers as something else: on every response, whatever
/// path made it (a handler, an event stream's head, the refusal of a connection past the limit). The pages'
/// Content-Security-Policy is the hub's (``WebPolicy``).
extension ServerCore {
    /// On every response. A tile server learns our origin, never a page's URL with a share token in it (and
    /// not nothing either, which OpenStreetMap's tile policy asks for); no type is ever guessed from a body.
    static let everyResponseHeaders: [(String, String)] = [
        ("Referrer-Policy", "strict-origin-when-cross-origin"),
        ("X-Content-Type-Options", "nosniff"),
    ]

    /// `response` with ``everyResponseHeaders``.
    static func withEveryResponseHeaders(_ response: HTTPResponse) -> HTTPResponse {
        var response = response
        for (name, value) in everyResponseHeaders { response.headers.set(name, value) }
        return response
    }

    /// An event stream's head, with ``everyResponseHeaders``.
    static let eventStreamHead: HTTPResponseHead = {
        var head = HTTPResponseHead.eventStream
        for (name, value) in everyResponseHeaders { head.headers.set(name, value) }
        return head
    }()
}
