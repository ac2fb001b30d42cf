import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The server under load: a child `moonrunner serve` this benchmark started, or one already running elsewhere.
///
/// The child's stderr goes to a temporary log file (never a pipe nobody drains: the server logs one line per
/// connection, and a full pipe would stall its loop); the port is read from its `listening on HOST:PORT` line.
final class LoadServerProcess {
    /// Where the server listens.
    let host: String
    /// Its port.
    let port: UInt16
    /// Its HTTP port (the event streams), when known.
    private(set) var httpPort: UInt16?
    /// Its process id, when known (RSS and CPU are read from /proc), else nil.
    let processID: Int32?
    private let child: SpawnedServer?
    private let logPath: String?
    private let temporaryDirectory: String?

    /// A failure to start the server, with what it logged.
    struct StartError: Error, CustomStringConvertible {
        /// What went wrong.
        let description: String
    }

    /// Uses a server that is already running.
    init(existingHost host: String, port: UInt16, processID: Int32?) {
        self.host = host
        self.port = port
        self.processID = processID
        child = nil
        logPath = nil
        temporaryDirectory = nil
    }

    /// Starts `binary serve --host HOST --port 0 --db DB` and waits (up to 15 s) for its listening line.
    /// `database` nil means a fresh SQLite file in a temporary directory, removed by ``stop()``. Every client
    /// comes from one address, so the per-address cap is off; `limits` (line protocol, HTTP) are the connection
    /// limits to ask for, so that the open-file limit is shared out as the load needs (the defaults, 20,000
    /// each, are halved where 20,000 descriptors are allowed: too few for 10,000 browsers; nil: the defaults);
    /// `serveOptions` are more of `serve`'s options.
    init(binary: String, host: String, database: String?, limits: (line: Int, http: Int)? = nil,
         serveOptions: [String] = []) throws(StartError) {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("moonrunner-load-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StartError(description: "cannot create \(directory): \(error)")
        }
        let log = directory + "/server.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let process: SpawnedServer
        do {
            var arguments = ["serve", "--host", host, "--port", "0", "--http-port", "0",
                             "--db", database ?? directory + "/load.sqlite", "--max-connections-per-address", "off"]
            if let limits {
                arguments += ["--max-connections", "\(limits.line)", "--max-http-connections", "\(limits.http)"]
            }
            arguments += serveOptions
            process = try SpawnedServer(executable: binary, arguments: arguments, logPath: log)
        } catch {
            throw StartError(description: error.description)
        }
        let deadline = LoadClock.monotonicSeconds() + 15
        var found: UInt16?
        // Both lines: `listening on …` then `http on …` (a child's log has no event to wait for: polled).
        while (found == nil || Self.httpPort(inLog: log) == nil) && LoadClock.monotonicSeconds() < deadline
                && process.isRunning {
            found = Self.listeningPort(inLog: log)
            usleep(10_000)
        }
        found = found ?? Self.listeningPort(inLog: log)
        guard let port = found else {
            if process.isRunning {
                process.terminate()
                _ = process.waitUntilExit()
            }
            let logged = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(atPath: directory)
            throw StartError(description: "the server did not report listening within 15 s; it logged:\n\(logged)")
        }
        self.host = host
        self.port = port
        httpPort = Self.httpPort(inLog: log)
        processID = process.processID
        child = process
        logPath = log
        temporaryDirectory = directory
    }

    /// The port in the first `listening on HOST:PORT` log line, if it is there yet.
    private static func listeningPort(inLog path: String) -> UInt16? {
        port(inLog: path, after: "listening on ", before: "\n")
    }

    /// The port in the `http on http://HOST:PORT/` log line (logged right after the listening line).
    private static func httpPort(inLog path: String) -> UInt16? {
        port(inLog: path, after: "http on http://", before: "/")
    }

    /// The port of the `HOST:PORT` that follows the first `marker` in the log and ends at `end`, if it is there.
    private static func port(inLog path: String, after marker: String, before end: Character) -> UInt16? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
              let range = text.range(of: marker) else { return nil }
        let rest = text[range.upperBound...]
        guard let stop = rest.firstIndex(of: end), let colon = rest[..<stop].lastIndex(of: ":") else { return nil }
        return UInt16(rest[rest.index(after: colon)..<stop])
    }

    /// The path of this executable, to start as the server by default.
    /// The `moonrunner` next to this benchmark in the build folder: the server it starts by default.
    static func ownExecutable() -> String {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("moonrunner").path
    }

    /// The server's resident set size in bytes (`VmRSS` of /proc/PID/status), nil when unknown.
    func residentBytes() -> Int? {
        guard let processID,
              let status = try? String(contentsOfFile: "/proc/\(processID)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count >= 2, let kilobytes = Int(fields[1]) { return kilobytes * 1024 }
        }
        return nil
    }

    /// CPU seconds (user + system) the server has used so far, nil when unknown.
    func cpuSeconds() -> Double? {
        guard let processID else { return nil }
        return Self.cpuSeconds(ofStatFile: "/proc/\(processID)/stat")
    }

    /// CPU seconds (user + system) of the process whose `/proc/…/stat` is at `path`.
    static func cpuSeconds(ofStatFile path: String) -> Double? {
        guard let stat = try? String(contentsOfFile: path, encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // After "pid (comm)": state is field 3; utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Lines of the server log containing `text` (0 for an external server).
    func logLines(containing text: String) -> Int {
        guard let logPath, let log = try? String(contentsOfFile: logPath, encoding: .utf8) else { return 0 }
        return log.split(separator: "\n").filter { $0.contains(text) }.count
    }

    /// SIGTERM to a child server, then waits for it to exit (it ends runs and flushes its store first).
    /// Returns the seconds that took and the exit status; nil for an external server.
    func stop() -> (seconds: Double, status: Int32)? {
        guard let child else { return nil }
        let started = LoadClock.monotonicSeconds()
        if child.isRunning { child.terminate() }
        let status = child.waitUntilExit()
        let result = (LoadClock.monotonicSeconds() - started, status)
        if let temporaryDirectory { try? FileManager.default.removeItem(atPath: temporaryDirectory) }
        return result
    }
}
