import Foundation
import WebAssets

/// The pages' Content-Security-Policy, which allows only what the pages load.
package enum WebPolicy {
    /// The pages' policy: scripts, styles, data and the pages' own images from this server only (no inline
    /// script or style: the pages have none, so an injected one cannot run), and map tiles from the configured
    /// tile server. The favicon is a `data:` image.
    package static func contentSecurityPolicy(for map: StreetMapConfiguration) -> String {
        var images = "img-src 'self' data:"
        if map.isEnabled, let tiles = map.tiles { images += " " + tileSource(tiles) }
        return ["default-src 'none'", "script-src 'self'", "style-src 'self'", images, "connect-src 'self'",
                "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'"].joined(separator: "; ")
    }

    /// The CSP source that matches every URL of a tile template: its origin (`https://tile.example.org:8443`),
    /// `https://*.example.org` for a `{s}.` subdomain, or the bare scheme when the host is anything CSP cannot
    /// say (a placeholder elsewhere in it, or characters that would break the header).
    package static func tileSource(_ template: String) -> String {
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
