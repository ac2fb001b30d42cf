import Foundation
import Reactor

/// A headless Chromium driven over the W3C WebDriver protocol (Debian's `chromium` and `chromium-driver`),
/// spoken directly over HTTP: no Selenium, no Python. Started on a free loopback port, stopped by `quit()`.
public final class WebDriver {
    /// Where Debian puts them; `available` is false when either is missing.
    public static let driverPath = "/usr/bin/chromedriver"
    public static let browserPath = "/usr/bin/chromium"
    public static var available: Bool {
        FileManager.default.isExecutableFile(atPath: driverPath) && FileManager.default.isExecutableFile(atPath: browserPath)
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    private let driver: ChildProcess
    private let port: UInt16
    private let session: String

    /// Starts chromedriver and a headless browser session with a window of `width`×`height`.
    public init(width: Int = 1280, height: Int = 1000) throws {
        let probe = try ListeningSocket(host: "127.0.0.1", port: 0)
        port = probe.port
        probe.close()
        driver = try ChildProcess(executable: Self.driverPath, arguments: ["--port=\(port)"], capturingOutput: false)
        let deadline = Date().addingTimeInterval(20)
        while true {
            if let status = try? Self.call(port, "GET", "/status", nil), (status["value"] as? [String: Any])?["ready"] as? Bool == true {
                break
            }
            guard Date() < deadline else { throw Failure("chromedriver did not become ready on port \(port)") }
            usleep(50_000)  // polling a process that offers no readiness event
        }
        var options: [String: Any] = ["binary": Self.browserPath,
                                      "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                                               "--window-size=\(max(width, 500)),\(height)", "--lang=en-GB"]]
        // Headless Chromium makes no window narrower than 500 px: a phone's width is emulated instead.
        if width < 500 {
            options["mobileEmulation"] = ["deviceMetrics": ["width": width, "height": height, "pixelRatio": 1, "touch": true]]
        }
        let capabilities: [String: Any] = ["capabilities": ["alwaysMatch": [
            "browserName": "chrome",
            "goog:chromeOptions": options,
            // The page's console, for `consoleErrors()`.
            "goog:loggingPrefs": ["browser": "ALL"],
        ]]]
        let created = try Self.call(port, "POST", "/session", capabilities)
        guard let value = created["value"] as? [String: Any], let id = value["sessionId"] as? String else {
            throw Failure("no session: \(created)")
        }
        session = id
    }

    /// Opens a URL and waits for the page to load.
    public func open(_ url: String) throws {
        _ = try command("POST", "url", ["url": url])
    }

    /// Runs JavaScript in the page (`return …` for a value).
    @discardableResult
    public func script(_ source: String, _ arguments: [Any] = []) throws -> Any? {
        try command("POST", "execute/sync", ["script": source, "args": arguments])["value"]
    }

    /// Waits until the script returns a truthy value; returns it.
    @discardableResult
    public func waitFor(_ what: String, timeout: Double = 20, _ source: String) throws -> Any {
        let deadline = Date().addingTimeInterval(timeout)
        var last: Any?
        while Date() < deadline {
            last = try script(source)
            if let value = last, !(value is NSNull), (value as? Bool) != false, (value as? String) != "" { return value }
            usleep(100_000)  // the page changes by itself; WebDriver has no event for "the DOM changed"
        }
        throw Failure("timed out waiting for \(what); last value \(String(describing: last))")
    }

    /// Types into the element matched by a CSS selector, then clicks another.
    public func type(_ text: String, into field: String, thenClick button: String) throws {
        let input = try element(field)
        _ = try command("POST", "element/\(input)/value", ["text": text])
        let target = try element(button)
        do {
            _ = try command("POST", "element/\(target)/click", [:])
        } catch let failure as Failure where failure.description.contains("intercepted") {
            // A toast over the button: the page is live and moving; click it the way a script would.
            try script("document.querySelector(arguments[0]).click()", [button])
        }
    }

    /// The console's errors and uncaught exceptions since the last call (chromedriver's browser log, which
    /// hands each entry out once).
    public func consoleErrors() throws -> [String] {
        let entries = try command("POST", "se/log", ["type": "browser"])["value"] as? [[String: Any]] ?? []
        return entries.filter { ($0["level"] as? String) == "SEVERE" }.map { $0["message"] as? String ?? "\($0)" }
    }

    /// Drags with the mouse from the middle of the element matched by a CSS selector, by (dx, dy) pixels, as a
    /// viewer pans a map.
    public func drag(_ selector: String, by dx: Int, _ dy: Int) throws {
        let target = try element(selector)
        let origin: [String: Any] = ["element-6066-11e4-a52e-4f735466cecf": target]
        let steps: [[String: Any]] = [
            ["type": "pointerMove", "duration": 0, "origin": origin, "x": 0, "y": 0],
            ["type": "pointerDown", "button": 0],
            ["type": "pointerMove", "duration": 100, "origin": "pointer", "x": dx / 2, "y": dy / 2],
            ["type": "pointerMove", "duration": 100, "origin": "pointer", "x": dx - dx / 2, "y": dy - dy / 2],
            ["type": "pointerUp", "button": 0],
        ]
        _ = try command("POST", "actions", ["actions": [["type": "pointer", "id": "mouse",
                                                          "parameters": ["pointerType": "mouse"], "actions": steps]]])
        _ = try command("DELETE", "actions", nil)
    }

    /// A PNG of the window.
    public func screenshot() throws -> Data {
        guard let base64 = try command("GET", "screenshot", nil)["value"] as? String, let data = Data(base64Encoded: base64) else {
            throw Failure("no screenshot")
        }
        return data
    }

    /// Ends the session and the driver.
    public func quit() {
        _ = try? command("DELETE", "", nil)
        driver.terminate()
        _ = driver.awaitExit(timeout: 10)
    }

    private func element(_ selector: String) throws -> String {
        let found = try command("POST", "element", ["using": "css selector", "value": selector])
        guard let value = found["value"] as? [String: Any], let id = value.values.first as? String else {
            throw Failure("no element \(selector): \(found)")
        }
        return id
    }

    private func command(_ method: String, _ path: String, _ body: [String: Any]?) throws -> [String: Any] {
        let result = try Self.call(port, method, "/session/\(session)" + (path.isEmpty ? "" : "/\(path)"), body)
        if let value = result["value"] as? [String: Any], let error = value["error"] as? String {
            throw Failure("\(method) \(path): \(error): \(value["message"] ?? "")")
        }
        return result
    }

    private static func call(_ port: UInt16, _ method: String, _ path: String, _ body: [String: Any]?) throws -> [String: Any] {
        let client = try HTTPTestClient(port: port)
        defer { client.close() }
        let payload = try body.map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) } ?? ""
        try client.send("\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(payload.utf8.count)\r\nConnection: close\r\n\r\n\(payload)")
        let response = try client.response(timeout: 60)
        return (try JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
    }
}
