import Foundation

/// The street map under the pages' tracks: Leaflet (Debian's `libjs-leaflet`, served by our own server, never
/// copied into the repository) and a tile server the browsers ask for map tiles. Without Leaflet, or with tiles
/// off, the pages draw the track as SVG on a plain background, as they always did.
public struct StreetMapConfiguration: Sendable, Equatable {
    /// Where Debian's `libjs-leaflet` puts Leaflet.
    public static let debianLeafletFolder = "/usr/share/javascript/leaflet"
    /// OpenStreetMap's standard tiles (their usage policy: visible attribution, no bulk loading, a referrer).
    public static let openStreetMapTiles = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
    /// What OpenStreetMap's tiles must show.
    public static let openStreetMapAttribution = "© OpenStreetMap contributors"
    /// Where the attribution links to for OpenStreetMap's tiles.
    public static let openStreetMapCopyright = "https://www.openstreetmap.org/copyright"

    /// Leaflet's files, read at start (nil: not installed; the pages draw SVG).
    public var leaflet: LeafletFiles?
    /// The tile URL template with `{z}`, `{x}`, `{y}` (and optionally `{s}`), or nil for no street map.
    public var tiles: String? = openStreetMapTiles
    /// The attribution shown on the map (plain text).
    public var attribution = openStreetMapAttribution
    /// Where the attribution links to (nil: no link).
    public var attributionURL: String? = openStreetMapCopyright
    /// Whether pages of a private runner (opened with a share token) may ask the tile server for tiles: each
    /// request tells that server roughly where the runner is. Off by default.
    public var tilesForPrivateRunners = false

    /// No Leaflet (so no street map) and OpenStreetMap's tiles once Leaflet is given.
    public init() {}

    /// Whether the pages get a street map at all.
    public var isEnabled: Bool { leaflet != nil && tiles != nil }

    /// Checks a `--tiles` template: an http or https URL with `{z}`, `{x}` and `{y}`. Returns why not, or nil.
    public static func problem(withTiles template: String) -> String? {
        guard let url = URL(string: template.replacingOccurrences(of: "{", with: "").replacingOccurrences(of: "}", with: "")),
              let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil else {
            return "not an http:// or https:// URL: \(template)"
        }
        for part in ["{z}", "{x}", "{y}"] where !template.contains(part) {
            return "\(template) has no \(part) (a tile URL template looks like \(openStreetMapTiles))"
        }
        return nil
    }
}

/// Leaflet's files from a folder (Debian: `/usr/share/javascript/leaflet`), read once: a fixed list, served at
/// `/assets/leaflet/NAME`; nothing else of the folder is reachable.
public struct LeafletFiles: Sendable, Equatable {
    /// The files served, by the name under `/assets/leaflet/`. Leaflet's CSS names its images relative to
    /// itself (`images/layers.png`).
    public static let names = ["leaflet.js", "leaflet.css", "images/layers.png", "images/layers-2x.png",
                               "images/marker-icon.png", "images/marker-icon-2x.png", "images/marker-shadow.png"]

    /// The folder they were read from.
    public let folder: String
    /// Each file, ready to send.
    public let files: [String: WebAsset]

    /// Reads the files from `folder`; nil when it has no `leaflet.js` and `leaflet.css` (the rest is optional).
    /// The minified script is preferred where the folder has one.
    public init?(folder: String) {
        var files: [String: WebAsset] = [:]
        for name in Self.names {
            let candidates = name == "leaflet.js" ? ["leaflet.min.js", "leaflet.js"] : [name]
            for candidate in candidates {
                let path = (folder as NSString).appendingPathComponent(candidate)
                // Bounded: Leaflet's files are a few hundred KB; anything past 4 MiB is not Leaflet.
                guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                      (attributes[.size] as? Int ?? .max) <= 4 << 20,
                      let data = FileManager.default.contents(atPath: path) else { continue }
                files[name] = WebAsset(name: name, contentType: WebAssets.contentType(forFileNamed: name), bytes: Array(data))
                break
            }
        }
        guard files["leaflet.js"] != nil, files["leaflet.css"] != nil else { return nil }
        self.folder = folder
        self.files = files
    }

    /// The file served at `/assets/leaflet/NAME`, nil for any other name.
    public func file(named name: String) -> WebAsset? {
        files[name]
    }
}
