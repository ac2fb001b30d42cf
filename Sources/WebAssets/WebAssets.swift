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

    /// Reads every file of `Resources/` once. A file whose name starts with `_` is a part of pages, not served:
    /// a page's line `<!-- include _NAME -->` stands for it (every page's head and header, and the splits table
    /// of the run and runner pages, are written once).
    private static func load() -> [String: WebAsset] {
        guard let directory = Bundle.module.url(forResource: "Resources", withExtension: nil),
              let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [:] }
        var files: [String: [UInt8]] = [:]
        for name in names where !name.hasPrefix(".") {
            if let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) {
                files[name] = Array(data)
            }
        }
        var assets: [String: WebAsset] = [:]
        for (name, bytes) in files where !name.hasPrefix("_") {
            let page = name.hasSuffix(".html") ? including(files, in: bytes) : bytes
            assert(!page.contains(Array("<!-- include ".utf8)), "\(name) includes a part that is not there")
            assets[name] = WebAsset(name: name, contentType: contentType(forFileNamed: name), bytes: page)
        }
        return assets
    }

    /// `page` with each of its lines `<!-- include _NAME -->` replaced by the part of that name.
    static func including(_ parts: [String: [UInt8]], in page: [UInt8]) -> [UInt8] {
        let opening = Array("<!-- include ".utf8), closing = Array(" -->".utf8), newline = UInt8(ascii: "\n")
        var lines = page.split(separator: newline, omittingEmptySubsequences: false)
        let endsWithNewline = page.last == newline
        if endsWithNewline { lines.removeLast() }
        var result: [UInt8] = []
        result.reserveCapacity(page.count + 2048)
        for (index, line) in lines.enumerated() {
            if line.starts(with: opening), line.reversed().starts(with: closing.reversed()),
               case let name = String(decoding: line.dropFirst(opening.count).dropLast(closing.count), as: UTF8.self),
               name.hasPrefix("_"), let part = parts[name] {
                result += part  // a part ends with its own newline
                continue
            }
            result += line
            if endsWithNewline || index < lines.count - 1 { result.append(newline) }
        }
        return result
    }
}
