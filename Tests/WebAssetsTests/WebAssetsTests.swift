import Testing
@testable import WebAssets

/// The page is self-contained and keeps the DOM contract the browser test relies on.
@Suite struct WebAssetsTests {
    static let pages = ["index.html", "runner.html", "run.html", "badges.html", "course.html"]

    func text(_ name: String) throws -> String {
        String(decoding: try #require(WebAssets.asset(named: name), "\(name) missing").bytes, as: UTF8.self)
    }

    @Test func everyFileIsLoadedWithItsType() throws {
        #expect(Set(WebAssets.all.keys).isSuperset(of: Self.pages + ["app.css", "common.js", "runner.js", "overview.js",
                                                                      "run.js", "badges.js", "course.js"]))
        #expect(WebAssets.asset(named: "runner.html")?.contentType == "text/html; charset=utf-8")
        #expect(WebAssets.asset(named: "common.js")?.contentType == "text/javascript; charset=utf-8")
        #expect(WebAssets.asset(named: "app.css")?.contentType == "text/css; charset=utf-8")
        #expect(WebAssets.asset(named: "nope.js") == nil)
    }

    /// Every page's head and header are written once (`_head.html`, `_header.html`) and included in each: a
    /// page is served whole, with its own title, and a part is never served on its own.
    @Test func everyPageIsServedWithItsHeadAndHeaderIncluded() throws {
        for page in Self.pages {
            let html = try text(page)
            #expect(!html.contains("<!-- include"), "\(page) kept an include")
            let charset = try #require(html.range(of: "<meta charset=\"utf-8\">"), "\(page) has no charset")
            let title = try #require(html.range(of: "<title>MoonRunner Live"), "\(page) has no title")
            #expect(charset.upperBound <= title.lowerBound && html.distance(from: html.startIndex, to: charset.lowerBound) < 1024,
                    "\(page): the charset comes first, within the first 1,024 bytes")
            #expect(html.contains("<link rel=\"stylesheet\" href=\"/assets/app.css\">"))
            #expect(html.contains("id=\"unit-km\"") && html.contains("id=\"unit-mi\""), "\(page) lacks the unit switch")
            #expect(html.hasSuffix("</html>\n"))
        }
        #expect(WebAssets.asset(named: "_head.html") == nil && WebAssets.asset(named: "_header.html") == nil)
    }

    @Test func anIncludeOfAnUnknownPartStaysAndTheLastLineKeepsItsEnding() {
        let parts = ["_a.html": Array("A\n".utf8)]
        let page = Array("x\n<!-- include _a.html -->\n<!-- include _b.html -->\ny".utf8)
        #expect(String(decoding: WebAssets.including(parts, in: page), as: UTF8.self)
                == "x\nA\n<!-- include _b.html -->\ny")
    }

    @Test func nothingIsFetchedFromAnotherHost() throws {
        for (name, asset) in WebAssets.all {
            let content = String(decoding: asset.bytes, as: UTF8.self)
            // The SVG namespace is an identifier, not a download.
            let scrubbed = content.replacingOccurrences(of: "http://www.w3.org/2000/svg", with: "")
            for marker in ["http://", "https://", "src=\"//", "href=\"//", "@import", "url("] {
                #expect(!scrubbed.contains(marker), "\(name) contains \(marker)")
            }
        }
    }

    @Test func everyScriptAndStylesheetAPageNamesExists() throws {
        for page in Self.pages {
            let html = try text(page)
            for prefix in ["src=\"/assets/", "href=\"/assets/"] {
                var rest = Substring(html)
                while let range = rest.range(of: prefix) {
                    let file = rest[range.upperBound...].prefix { $0 != "\"" }
                    #expect(WebAssets.asset(named: String(file)) != nil, "\(page) names \(file)")
                    rest = rest[range.upperBound...]
                }
            }
        }
    }

    @Test func theBrowserTestsSelectorsExist() throws {
        let runner = try text("runner.html")
        for id in ["distance", "elapsed", "moving", "pace-current", "pace-average", "next-badge", "next-progress",
                   "badges", "splits", "cheers", "cheer-text", "cheer-send", "toasts", "unit-km", "unit-mi"] {
            #expect(runner.contains("id=\"\(id)\""), "runner.html lacks #\(id)")
        }
        #expect(runner.contains("<svg id=\"track\""))
        for id in ["course-box", "togo", "next-point", "course-link", "legend-course"] {
            #expect(runner.contains("id=\"\(id)\""), "runner.html lacks #\(id)")
        }
        let course = try text("course.html")
        for id in ["course-name", "course-summary", "course-runners", "course-points", "map-box", "status", "toasts"] {
            #expect(course.contains("id=\"\(id)\""), "course.html lacks #\(id)")
        }
        #expect(course.contains("<svg id=\"track\""))
        #expect(try text("index.html").contains("<table id=\"overview\">"))
        #expect(try text("run.html").contains("id=\"download-gpx\""))
        for id in ["elevation-box", "elevation-profile", "elevation-range", "climb-box", "climb"] {
            #expect(try text("run.html").contains("id=\"\(id)\""), "run.html lacks #\(id)")
        }
        #expect(try text("run.js").contains("function drawElevation()"))
        #expect(try text("badges.html").contains("id=\"board\""))
        // Segments are <path> elements with a stroke colour, the position a circle#position.
        let common = try text("common.js")
        #expect(common.contains(#"svgNode("path", { stroke: colours[k], class: "segment" })"#))
        #expect(common.contains(#"id: "position""#))
    }

    struct Route: Sendable {
        let segments: [String]
        let page: String?
    }

    static let routes: [Route] = [
        Route(segments: [], page: "index.html"),
        Route(segments: ["runners", "ann"], page: "runner.html"),
        Route(segments: ["runners", "ann lee"], page: "runner.html"),
        Route(segments: ["runners", "ann", "badges"], page: "badges.html"),
        Route(segments: ["runs", "17"], page: "run.html"),
        Route(segments: ["courses", "berlin"], page: "course.html"),
        Route(segments: ["courses", ""], page: nil),
        Route(segments: ["courses"], page: nil),
        Route(segments: ["assets", "app.css"], page: "app.css"),
        Route(segments: ["runs", "17.gpx"], page: nil),
        Route(segments: ["runs", "١٧"], page: nil),
        Route(segments: ["runners", ""], page: nil),
        Route(segments: ["runners"], page: nil),
        Route(segments: ["runners", "ann", "cheers"], page: nil),
        Route(segments: ["api", "overview"], page: nil),
        Route(segments: ["assets", "missing.js"], page: nil),
        Route(segments: [""], page: nil),
    ]

    @Test(arguments: routes) func pagesAreRoutedByPath(_ route: Route) {
        #expect(WebAssets.page(forPathSegments: route.segments)?.name == route.page)
    }
}
