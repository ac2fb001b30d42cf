import LiveCore
import Foundation
import HTTP
import WebAssets

/// The headers that keep a browser from reading our answers as something else: on every response, whatever
/// path made it (a handler, an event stream's head, the refusal of a connection past the limit), and on the
/// pages a Content-Security-Policy that allows only what the pages load.
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

    /// The pages' policy: scripts, styles, data and the pages' own images from this server only (no inline
    /// script or style: the pages have none, so an injected one cannot run), and map tiles from the configured
    /// tile server. The favicon is a `data:` image.
    static func contentSecurityPolicy(for map: StreetMapConfiguration) -> String {
        var images = "img-src 'self' data:"
        if map.isEnabled, let tiles = map.tiles { images += " " + tileSource(tiles) }
        return ["default-src 'none'", "script-src 'self'", "style-src 'self'", images, "connect-src 'self'",
                "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'"].joined(separator: "; ")
    }

    /// The CSP source that matches every URL of a tile template: its origin (`https://tile.example.org:8443`),
    /// `https://*.example.org` for a `{s}.` subdomain, or the bare scheme when the host is anything CSP cannot
    /// say (a placeholder elsewhere in it, or characters that would break the header).
    static func tileSource(_ template: String) -> String {
        guard let separator = template.range(of: "://") else { return "https:" }
        let scheme = template[..<separator.lowerBound].lowercased()
        let authority = template[separator.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let host = authority.split(separator: "@").last.map(String.init) ?? ""
        let wildcard = host.hasPrefix("{s}.") ? "*." + host.dropFirst(4) : host
        let allowed = wildcard.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || ".-:[]*".unicodeScalars.contains(scalar))
        }
        guard !wildcard.isEmpty, allowed, !wildcard.dropFirst().contains("*") else { return scheme + ":" }
        return scheme + "://" + wildcard
    }
}
