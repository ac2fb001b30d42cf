import Broadcaster
import Foundation
import MoonRunnerTestSupport
import RunStore
import Testing
import Wire

/// `moonrunner watch`, `coach`, `runs`, `badges` and `demo` as processes, the way README shows them.
@Suite(.mayBlock, .quietMachine) struct WatchCommandTests {
    static let tmuxPath = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/bin/tmux"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Runs tmux with `arguments` through bash, closing every inherited descriptor above 2 first, so the tmux
    /// server (which daemonises) holds nothing of the test process open.
    static func tmux(_ arguments: [String]) throws {
        try runProgram("/bin/bash", ["-c", "for fd in $(ls /proc/$$/fd); do [ \"$fd\" -gt 2 ] && eval \"exec $fd>&-\"; done; "
            + "exec \"$@\"", "bash", tmuxPath!] + arguments)
    }

    /// The pane's text, through a named tmux buffer saved to a file.
    static func capture(_ session: String, into file: URL) throws -> String {
        try tmux(["capture-pane", "-b", session, "-t", session, ";", "save-buffer", "-b", session, file.path,
                  ";", "delete-buffer", "-b", session])
        return (try? String(contentsOf: file, encoding: .utf8)) ?? ""
    }

    @Test(.enabled(if: tmuxPath != nil, "tmux is not installed (.ci/run installs it): the TTY view is not checked"))
    func watchDrawsAProgressBarToTheNextBadgeOnATerminal() async throws {
        try await withServer { server in
            let session = "moonrunner-watch-\(UUID().uuidString.prefix(8))"
            let command = "'\(moonrunnerExecutable.path)' watch tty --port \(server.port) --duration 60"
            try Self.tmux(["new-session", "-d", "-s", session, "-x", "100", "-y", "30", command])
            defer { _ = try? Self.tmux(["kill-session", "-t", session]) }
            let simulate = try ChildProcess(["simulate", "--route", "10k", "--speed", "20", "--name", "tty",
                                             "--port", String(server.port), "--quiet"])
            defer { simulate.terminate() }
            // tmux has no "screen changed" event: poll the pane until the view shows up (or time out).
            var screen = ""
            let file = temporaryFolder().appendingPathComponent("pane.txt")
            let deadline = Date().addingTimeInterval(30)
            let bar = #/\[[#-]{30}\]  \d+[.,]\d (km|mi) until /#
            while Date() < deadline {
                screen = try Self.capture(session, into: file)
                if screen.contains(bar), screen.contains("badges: Earth") { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(screen.contains(bar), "\(screen)")
            #expect(screen.contains("MoonRunner Live - watching tty"))
            #expect(screen.contains("tty  ") && screen.contains("now ") && screen.contains("avg "))
            #expect(screen.contains("badges: Earth"))
            // Redrawn in place: the heading appears once, at the top.
            #expect(screen.components(separatedBy: "MoonRunner Live").count == 2)
            #expect(screen.hasPrefix("MoonRunner Live"))
        }
    }

    @Test func pipedWatchPrintsLinesAndExitsAfterTheEnd() async throws {
        try await withServer { server in
            let watch = try ChildProcess(["watch", "pip", "--port", String(server.port), "--until-end"])
            let coach = try ChildProcess(["coach", "pip", "--port", String(server.port), "--until-end"])
            // Give both a moment to subscribe: wait until the server has counted them.
            let probe = try TestClient(port: server.port)
            for _ in 0..<100 {
                try probe.send("stats:")
                let stats = try probe.expect("stats:server")
                if stats.contains("spectators=1") && stats.contains("coaches=1") { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            let simulate = try ChildProcess(["simulate", "--route", "park", "--speed", "500", "--name", "pip",
                                             "--port", String(server.port)])
            #expect((await exitStatus(simulate, timeout: 60)) == 0)
            #expect((await exitStatus(watch, timeout: 30)) == 0)
            #expect((await exitStatus(coach, timeout: 30)) == 0)

            let watched = watch.standardOutput.split(separator: "\n").map(String.init)
            #expect(watched.first == "pip started (run 1)")
            #expect(watched.contains { $0.hasPrefix("pip won The Moon at ") })
            #expect(watched.contains { $0.contains(" until ") && $0.contains("avg ") }, "pace lines when piped")
            #expect(watched.last?.hasPrefix("pip: ") == true && watched.last?.contains("saved as run 1") == true)
            #expect(!watch.standardOutput.contains("\u{1B}["), "no escape codes on a pipe")

            let coached = coach.standardOutput.split(separator: "\n").map(String.init).dropFirst()
            #expect(coach.standardOutput.hasPrefix("coaching pip on 127.0.0.1:\(server.port): waiting for runs"))
            #expect(coached.first == "pip started (run 1)")
            #expect(coached.dropFirst().dropLast().allSatisfy { $0.hasPrefix("pip won ") }, "\(coached)")
            #expect(coached.count >= 7, "Earth ... Phobos: \(coached)")
            #expect(coached.last?.contains("saved as run 1") == true)
        }
    }

    @Test func runsAndBadgesPrintAlignedTables() async throws {
        let store = MemoryRunStore()
        try await withServer(store: store) { server in
            let port = String(server.port)
            let simulate = try ChildProcess(["simulate", "--route", "park", "--speed", "3000", "--name", "tab", "--port", port])
            #expect((await exitStatus(simulate, timeout: 60)) == 0)
            store.flush()
            let runs = try ChildProcess(["runs", "tab", "--port", port, "--units", "km"])
            #expect((await exitStatus(runs, timeout: 30)) == 0)
            let lines = runs.standardOutput.split(separator: "\n").map(String.init)
            #expect(lines.count == 2)
            #expect(lines[0].hasPrefix("RUN  DATE (") && lines[0].hasSuffix("PACE"))
            #expect(lines[1].hasPrefix("  1  ") && lines[1].hasSuffix(" /km"))
            // Columns line up: the header's PACE ends where the row's pace ends.
            #expect(lines[0].count == lines[1].count)

            let badges = try ChildProcess(["badges", "tab", "--port", port, "--units", "mi"])
            #expect((await exitStatus(badges, timeout: 30)) == 0)
            let board = badges.standardOutput.split(separator: "\n").map(String.init)
            #expect(board[0].hasPrefix("BADGE") && board[0].contains("EARNED (") && board[0].hasSuffix("TO WIN"))
            let moon = try #require(board.first { $0.hasPrefix("The Moon ") })
            #expect(moon.contains("1.00 mi") && moon.hasSuffix(" /mi") && moon.contains("silver at "))
            #expect(board.contains { $0.hasPrefix("Interstellar Space") && $0.hasSuffix("more to earn it") })

            let unknown = try ChildProcess(["runs", "nobody", "--port", port])
            #expect((await exitStatus(unknown, timeout: 30)) == 1)
            #expect(unknown.standardError.contains("not_found"))
        }
    }

    @Test func demoShowsThreeRunnersAndStopsAfterItsDuration() async throws {
        let demo = try ChildProcess(["demo", "--duration", "4", "--speed", "200"])
        #expect((await exitStatus(demo, timeout: 30)) == 0)
        let output = demo.standardOutput
        for runner in ["ann", "bob", "cat"] { #expect(output.contains("\(runner) started"), "\(runner): \(output)") }
        #expect(output.contains("won Earth"))
    }

    /// Piped, the demo's heading has the line-protocol port as a terminal's has (it had only the web page's),
    /// and it is the port the demo serves.
    @Test func demoOnAPipeHeadsWithItsLineProtocolPort() async throws {
        let demo = try ChildProcess(["demo", "--duration", "5", "--speed", "200"])
        let output = try await offPool { try demo.awaitOutput(containing: "\n", onStandardError: false) }
        let heading = try #require(output.split(separator: "\n").first.map(String.init))
        #expect(heading.hasPrefix("MoonRunner Live demo: "), "\(heading)")
        let server = #/demo server on 127\.0\.0\.1:(\d+) \(also try: moonrunner watch '\*' --port (\d+)\)/#
        let match = try #require(heading.firstMatch(of: server), "\(heading)")
        #expect(match.1 == match.2)
        let client = try TestClient(port: try #require(UInt16(match.1)))
        try client.send("ping:")
        try client.expectNext("ok:ping")
        #expect((await exitStatus(demo, timeout: 30)) == 0)
    }
}
