import Foundation
import MoonRunnerTestSupport
import Reactor
import RunStore
import Testing
import Wire

/// `moonrunner serve` as an operator runs it: a real process, signals, a database file.
@Suite(.mayBlock) struct ServeCommandTests {
    @Test func sigtermEndsOpenRunsSavedFlushesAndExitsZero() throws {
        let folder = temporaryFolder()
        let database = folder.appendingPathComponent("runs.sqlite").path
        let server = try ChildProcess(["serve", "--port", "0", "--http-port", "0", "--db", database])
        let port = try server.listeningPort()
        let runner = try TestClient(port: port)
        try runner.send("iam:ann")
        try runner.expectNext("ok:iam")
        let watcher = try TestClient(port: port)
        try watcher.send("watch:ann")
        try watcher.expectNext("ok:watch")
        let fixes = straightRun(count: 30)
        for line in fixes { try runner.send(line) }
        try runner.lines(until: "last pace") { $0.hasPrefix("pace:ann") && $0.contains("ts=\(fixes.last!.split(separator: ",").last!) ") }

        server.signal(SIGTERM)
        let end = try RunEndedEvent(event: Event.parse(watcher.expect("end:ann")))
        #expect(end.saved && end.reason == .shutdown)
        #expect(try watcher.awaitClose().contains { $0.hasPrefix("err:shutting_down") })
        #expect(server.awaitExit() == 0)
        #expect(server.standardError.contains("shutting down"))

        let store = try SQLiteRunStore(path: database)
        defer { store.close() }
        let run = try #require(try store.run(id: end.runID))
        #expect(run.record.status == .saved)
        #expect(try store.fixes(ofRun: end.runID).count == 30)
        #expect(abs(run.record.distance - end.distance) < 0.01)
    }

    @Test func helpListsEveryLimitFlag() throws {
        let help = try ChildProcess(["serve", "--help"])
        #expect(help.awaitExit() == 0)
        let text = help.standardOutput
        for flag in ["--host", "--port", "--db", "--max-connections", "--idle-timeout", "--lines-per-second",
                     "--errors-per-second", "--high-water", "--hard-limit", "--resume-window", "--lines-per-turn",
                     "--lines-per-loop-turn", "--read-ahead", "--receive-buffer", "--memory-return",
                     "--max-http-connections", "--max-connections-per-address"] {
            #expect(text.contains(flag), "\(flag)")
        }
    }

    @Test func aDatabaseThatCannotBeOpenedIsAClearErrorAtStart() throws {
        let folder = temporaryFolder()
        let garbage = folder.appendingPathComponent("garbage.sqlite")
        try Data(repeating: 0x42, count: 8192).write(to: garbage)
        let server = try ChildProcess(["serve", "--port", "0", "--http-port", "0", "--db", garbage.path])
        #expect(server.awaitExit() == 1)
        #expect(server.standardError.contains("cannot open the database"))
    }

    /// A port another program holds: `serve` names the port and the flag that moves it, exits 1, and leaves no
    /// database file behind (it opened the store before it bound, and said only `bind: Address already in use`).
    @Test(arguments: ["--port", "--http-port"])
    func aTakenPortIsNamedWithItsFlagAndNoDatabaseIsCreated(taken flag: String) throws {
        let holder = try ListeningSocket(host: "127.0.0.1", port: 0)
        defer { holder.close() }
        let folder = temporaryFolder()
        let database = folder.appendingPathComponent("new.sqlite").path
        let ports = flag == "--port" ? ["--port", String(holder.port), "--http-port", "0"]
            : ["--port", "0", "--http-port", String(holder.port)]
        let server = try ChildProcess(["serve", "--db", database] + ports)
        #expect(server.awaitExit() == 1)
        let expected = flag == "--port"
            ? "moonrunner serve: port \(holder.port) is taken: choose another with --port N\n"
            : "moonrunner serve: HTTP port \(holder.port) is taken: choose another with --http-port N, or --http-port off\n"
        #expect(server.standardError == expected)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [], "nothing created")
    }

    @Test(arguments: [["--lines-per-loop-turn", "0"], ["--lines-per-turn", "0"], ["--receive-buffer", "12"],
                      ["--receive-buffer", "lots"], ["--memory-return", "0"], ["--memory-return", "never"],
                      ["--read-ahead", "4095"]])
    func capacityFlagsOutOfRangeAreRefusedAtStart(flag: [String]) throws {
        let server = try ChildProcess(["serve", "--port", "0", "--http-port", "off", "--db", ":memory:"] + flag)
        #expect(server.awaitExit() == 2)
        #expect(server.standardError.contains(flag[0]), "\(server.standardError)")
    }

    @Test func withoutLeafletServeSaysOnceHowToGetTheStreetMapAndThePagesAskForNone() throws {
        let missing = temporaryFolder().appendingPathComponent("no-leaflet").path
        let server = try ChildProcess(["serve", "--port", "0", "--http-port", "0", "--db", ":memory:", "--leaflet", missing])
        defer { server.terminate() }
        let port = try server.httpPort()
        let log = server.standardError
        #expect(log.components(separatedBy: "street map: no Leaflet in \(missing)").count == 2, "\(log)")
        let client = try HTTPTestClient(port: port)
        let settings = try client.get("/api/map")
        #expect(settings.status == 200)
        #expect(settings.text
                == #"{"leaflet":false,"tiles":null,"attribution":null,"attribution_url":null,"tiles_private":false}"#)
        #expect(try client.get("/assets/leaflet/leaflet.js").status == 404)
        #expect(settings.headers.first { $0.0.lowercased() == "referrer-policy" }?.1 == "strict-origin-when-cross-origin")
    }

    @Test(arguments: [["--tiles", "ftp://x/{z}/{x}/{y}"], ["--tiles", "https://tiles.example/{z}/{x}.png"],
                      ["--tiles-private", "maybe"], ["--tiles-attribution", ""]])
    func streetMapFlagsOutOfShapeAreRefusedAtStart(flag: [String]) throws {
        let server = try ChildProcess(["serve", "--port", "0", "--http-port", "off", "--db", ":memory:"] + flag)
        #expect(server.awaitExit() == 2)
        #expect(server.standardError.contains(flag[0]), "\(server.standardError)")
    }

    @Test func capacityFlagsInRangeServe() throws {
        let server = try ChildProcess(["serve", "--port", "0", "--http-port", "off", "--db", ":memory:",
                                       "--lines-per-loop-turn", "64", "--receive-buffer", "auto", "--memory-return", "off",
                                       "--read-ahead", "4096"])
        defer { server.terminate() }
        let client = try TestClient(port: try server.listeningPort())
        try client.send("ping:")
        try client.expectNext("ok:ping")
    }
}
