import Foundation

/// One file of the web page, ready to send.
public struct WebAsset: Sendable, Hashable {
    /// The file name under `Resources/`, e.g. `runner.html`.
    public var name: String
    /// The `Content-Type` to send, with charset for text.
    public var contentType: String
    /// The file's bytes.
    public var bytes: [UInt8]
}

/// The live page's files (HTML, CSS, JS, SVG), shipped as package resources and read once into memory:
/// nothing is fetched from anywhere else, so the page works without internet.
public enum WebAssets {
    /// Every asset by file name, loaded on first use.
    public static let all: [String: WebAsset] = load()

    /// The asset with this file name (`app.js`), nil for unknown names.
    public static func asset(named name: String) -> WebAsset? {
        all[name]
    }

    /// The asset a page URL shows, by the path's decoded segments (`HTTPRequest.pathSegments`):
    /// `/` → `index.html`, `/runners/NAME` → `runner.html`, `/runners/NAME/badges` → `badges.html`,
    /// `/runs/ID` (digits) → `run.html`, `/courses/NAME` → `course.html`, `/assets/FILE` → that file. Nil for anything else, including
    /// the exports `/runs/ID.gpx|.geojson|.svg` and the JSON API, which the server answers itself.
    /// The pages read NAME and ID from `location.pathname`, so one file serves every runner.
    public static func page(forPathSegments segments: [String]) -> WebAsset? {
        switch segments.count {
        case 0:
            return asset(named: "index.html")
        case 2 where segments[0] == "runners" && !segments[1].isEmpty:
            return asset(named: "runner.html")
        case 2 where segments[0] == "courses" && !segments[1].isEmpty:
            return asset(named: "course.html")
        case 3 where segments[0] == "runners" && !segments[1].isEmpty && segments[2] == "badges":
            return asset(named: "badges.html")
        case 2 where segments[0] == "runs" && !segments[1].isEmpty && segments[1].allSatisfy(\.isASCII)
            && segments[1].allSatisfy(\.isNumber):
            return asset(named: "run.html")
        case 2 where segments[0] == "assets":
            return asset(named: segments[1])
        default:
            return nil
        }
    }

    /// The content type for a file name's extension.
    public static func contentType(forFileNamed name: String) -> String {
        switch name.split(separator: ".").last.map(String.init) ?? "" {
        case "html": return "text/html; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "js": return "text/javascript; charset=utf-8"
        case "svg": return "image/svg+xml"
        case "json": return "application/json"
        case "png": return "image/png"
        case "ico": return "image/x-icon"
        default: return "application/octet-stream"
        }
    }

    private static func load() -> [String: WebAsset] {
        guard let directory = Bundle.module.url(forResource: "Resources", withExtension: nil),
              let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [:] }
        var assets: [String: WebAsset] = [:]
        for name in names where !name.hasPrefix(".") {
            guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) else {
                continue
            }
            assets[name] = WebAsset(name: name, contentType: contentType(forFileNamed: name), bytes: Array(data))
        }
        return assets
    }
}
