import Foundation
import Glibc
import MoonRunnerTestSupport
import Testing

/// `moonrunner serve` within its open-file limit (issue 26): the connection limits fitted to it at start, and
/// newcomers refused at once, never left waiting, when the process runs out of descriptors anyway. Real
/// processes: the limit is the process's own.
@Suite(.mayBlock) struct OpenFileLimitTests {
    /// A server started under `ulimit -n LIMIT` (soft and hard) by the shell, which then becomes the server.
    private static func serve(openFiles limit: Int, _ arguments: [String] = []) throws -> ChildProcess {
        try ChildProcess(executable: "/bin/sh", arguments: [
            "-c", "ulimit -n \(limit) && exec \"$0\" \"$@\"", moonrunnerExecutable.path,
            "serve", "--port", "0", "--http-port", "0", "--db", ":memory:", "--loops", "1",
        ] + arguments)
    }

    /// The number in the start log's `NAME lowered to N` / `NAME to N`.
    private static func fittedLimit(_ log: String, after flag: String) throws -> Int {
        let line = try #require(log.components(separatedBy: "\n").first { $0.contains("open files:") })
        let tail = try #require(line.components(separatedBy: flag).last)
        let digits = tail.drop { !$0.isNumber }.prefix { $0.isNumber }
        return try #require(Int(digits))
    }

    @Test func theDefaultsAreFittedWithinAProcessOf300DescriptorsAndThoseBeyondAreRefusedAtOnce() throws {
        let server = try Self.serve(openFiles: 300)
        defer {
            server.terminate()
            _ = server.awaitExit()
        }
        let port = try server.listeningPort()
        let httpPort = try server.httpPort()
        let log = server.standardError
        #expect(log.contains("open files: 300 allowed (hard limit 300)"), "\(log)")
        let lineLimit = try Self.fittedLimit(log, after: "--max-connections lowered")
        let httpLimit = try Self.fittedLimit(log, after: "--max-http-connections")
        let total = try Self.fittedLimit(log, after: "both together at most")
        // 300 less the reserve (64, 3 for the loop, nothing for a store in memory) is one pool of 233; either
        // kind may use all but a tenth of it.
        #expect(total == 233 && lineLimit == 210 && httpLimit == 210, "\(log)")

        // Every place of the pool taken by an idle connection, of both kinds; the server still has descriptors
        // to spare.
        let line = 150, http = total - 150
        let idle = try (0..<line).map { _ in try TestClient(port: port) }
        let browsers = try (0..<http).map { _ in try HTTPTestClient(port: httpPort) }
        defer {
            idle.forEach { $0.close() }
            browsers.forEach { $0.close() }
        }
        try idle[0].ask("ping:", expecting: "ok:ping")
        #expect(try browsers[0].get("/healthz").status == 200)
        try idle[line - 1].ask("ping:", expecting: "ok:ping")
        #expect(try browsers[http - 1].get("/healthz").status == 200)

        let started = Date()
        let refusal = try TestClient(port: port).awaitClose()
        #expect(refusal.first?.hasPrefix("err:busy") == true, "\(refusal)")
        let answer = try HTTPTestClient(port: httpPort).get("/healthz")
        #expect(answer.status == 503)
        #expect(Date().timeIntervalSince(started) < 5, "refused at once, not left waiting")
        // The ones in keep working.
        try idle[line / 2].ask("ping:", expecting: "ok:ping")
        #expect(try browsers[http / 2].get("/healthz").status == 200)
        #expect(server.isRunning)
        #expect(!server.standardError.contains("out of file descriptors"), "the budget kept it within its limit")
    }

    /// Out of descriptors while serving (the limit lowered under a running server with prlimit): each newcomer
    /// is accepted on the spare descriptor and refused at once, the connections in go on, and once descriptors
    /// are free again newcomers are served: no spin, no silent stop.
    @Test func outOfDescriptorsWhileServingNewcomersAreRefusedAtOnceAndServedAgainOnceThereAreSome() throws {
        let server = try ChildProcess(["serve", "--port", "0", "--http-port", "0", "--db", ":memory:", "--loops", "1"])
        defer {
            server.terminate()
            _ = server.awaitExit()
        }
        let port = try server.listeningPort()
        let httpPort = try server.httpPort()
        let runner = try TestClient(port: port)
        try runner.ask("ping:", expecting: "ok:ping")
        let browser = try HTTPTestClient(port: httpPort)
        #expect(try browser.get("/healthz").status == 200)

        let original = try ProcessFileLimit.limits(of: server.pid)
        let open = try ProcessFileLimit.openDescriptors(of: server.pid)
        try ProcessFileLimit.setSoftLimit(of: server.pid, to: try #require(open.last) + 1)
        // A gap below the highest descriptor takes a newcomer or two; then every one is refused.
        var admitted: [TestClient] = []
        defer { admitted.forEach { $0.close() } }
        var refusal: [String] = []
        for _ in 0..<32 where refusal.isEmpty {
            let started = Date()
            let newcomer = try TestClient(port: port)
            do {
                let first = try newcomer.nextLine(timeout: 1)
                refusal = [first] + ((try? newcomer.awaitClose()) ?? [])
                #expect(Date().timeIntervalSince(started) < 1, "refused at once")
            } catch is TestClient.Timeout {
                try newcomer.ask("ping:", expecting: "ok:ping")
                admitted.append(newcomer)
            }
        }
        #expect(refusal.first?.hasPrefix("err:busy") == true, "\(refusal), \(admitted.count) admitted")
        let answer = try HTTPTestClient(port: httpPort).get("/healthz", timeout: 5)
        #expect(answer.status == 503)
        // The connections in go on, line protocol and keep-alive HTTP.
        try runner.ask("ping:", expecting: "ok:ping")
        #expect(try browser.get("/healthz").status == 200)
        _ = try server.awaitOutput(containing: "out of file descriptors", timeout: 5)

        try ProcessFileLimit.setSoftLimit(of: server.pid, to: original.soft)
        let served = try TestClient(port: port)
        try served.ask("ping:", expecting: "ok:ping")
        #expect(try HTTPTestClient(port: httpPort).get("/healthz").status == 200)
        #expect(server.isRunning)
        // The loop did not spin meanwhile: a few hundredths of a second of CPU for all of it.
        let cpu = try Self.cpuSeconds(of: server.pid)
        #expect(cpu < 5, "\(cpu) s of CPU")
    }

    /// User plus system CPU seconds of a process so far (`/proc/PID/stat` fields 14 and 15).
    private static func cpuSeconds(of pid: pid_t) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let fields = stat[stat.index(after: try #require(stat.lastIndex(of: ")")))...].split(separator: " ")
        let ticks = (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
