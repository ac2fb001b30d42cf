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
