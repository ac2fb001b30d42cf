import Reactor
import Foundation
import PostgresRunStore
#if canImport(Glibc)
import Glibc
#endif

/// A real PostgreSQL server for tests. `MOONRUNNER_TEST_POSTGRES=postgres://USER@HOST:PORT/DB` names one a
/// script started (`.ci/run` does; the user must be allowed to create databases); otherwise the first test
/// that needs one starts a throwaway server: `initdb` into a temporary directory and `pg_ctl start` on a free
/// 127.0.0.1 port with its unix socket in that directory, stopped and removed when the test process exits. As
/// root (PostgreSQL refuses to run as root) the server's programs run as the `postgres` user via `runuser`.
///
/// Tests may also start servers of their own (``start()``) to stop and restart them.
public final class PostgresTestServer: @unchecked Sendable {
    /// A URL of a database on the server where databases may be created.
    public let adminURL: String
    /// The TCP port on 127.0.0.1 (0 for a server given by URL).
    public let port: UInt16
    /// The temporary directory holding `data`, `socket` and `postgres.log`; nil for a server given by URL.
    private let directory: URL?

    /// The environment variable naming a server to use instead of starting one.
    public static let environmentVariable = "MOONRUNNER_TEST_POSTGRES"

    /// True when PostgreSQL tests can run: a server is named, or `initdb` is installed. Always true under
    /// `CI=true`, so that a missing PostgreSQL fails those tests there instead of skipping them.
    public static let isAvailable: Bool = {
        let environment = ProcessInfo.processInfo.environment
        if environment["CI"] == "true" || environment[environmentVariable] != nil || binaries != nil { return true }
        FileHandle.standardError.write(Data("PostgreSQL tests skipped: \(skipReason)\n".utf8))
        return false
    }()

    /// Why PostgreSQL tests are skipped here (for `.enabled(if:)` traits).
    public static let skipReason = "no \(environmentVariable) and no initdb in /usr/lib/postgresql/*/bin "
        + "(install postgresql, or set \(environmentVariable)=postgres://USER@HOST:PORT/DB)"

    /// The directory with `initdb`, `pg_ctl` and `postgres`: the newest version Debian installed.
    static let binaries: String? = {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted()
        return versions.reversed().map { "\(root)/\($0)/bin" }
            .first { FileManager.default.isExecutableFile(atPath: "\($0)/initdb") }
    }()

    /// Failures starting or using a server.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String

        /// A failure saying `description`.
        public init(description: String) { self.description = description }
    }

    private init(adminURL: String, port: UInt16, directory: URL?) {
        self.adminURL = adminURL
        self.port = port
        self.directory = directory
    }

    // MARK: The shared server

    private static let sharedLock = NSLock()
    nonisolated(unsafe) private static var sharedServer: Result<PostgresTestServer, Failure>?
    nonisolated(unsafe) private static var createdDatabases: [String] = []

    /// The server of this test process: the one named by the environment, or one started on first use.
    public static func shared() throws -> PostgresTestServer {
        sharedLock.lock()
        defer { sharedLock.unlock() }
        if let sharedServer { return try sharedServer.get() }
        let result: Result<PostgresTestServer, Failure>
        if let url = ProcessInfo.processInfo.environment[environmentVariable] {
            result = .success(PostgresTestServer(adminURL: url, port: 0, directory: nil))
        } else {
            do {
                result = .success(try start())
            } catch let failure as Failure {
                result = .failure(failure)
            } catch {
                result = .failure(Failure(description: "\(error)"))
            }
        }
        sharedServer = result
        atexit { PostgresTestServer.stopSharedAtExit() }
        return try result.get()
    }

    /// At exit: the started server is stopped and removed; databases made on a given server are dropped.
    private static func stopSharedAtExit() {
        guard case .success(let server) = sharedServer else { return }
        if server.directory != nil {
            server.remove()
        } else if let admin = try? PostgresConnection(url: server.adminURL) {
            for name in createdDatabases { try? admin.dropDatabase(named: name) }
        }
    }

    /// A new empty database on this server (a fresh one per store, so tests never see each other's rows);
    /// returns its URL.
    public func createDatabase() throws -> String {
        let name = "moonrunner_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        let admin = try PostgresConnection(url: adminURL)
        try admin.createDatabase(named: name)
        Self.sharedLock.lock()
        Self.createdDatabases.append(name)
        Self.sharedLock.unlock()
        return Self.url(adminURL, database: name)
    }

    /// `url` with its database replaced by `database`.
    static func url(_ url: String, database: String) -> String {
        guard var components = URLComponents(string: url) else { return url }
        components.path = "/" + database
        return components.string ?? url
    }

    // MARK: A server of one's own

    /// Starts a throwaway server (initdb, then pg_ctl start on a free port); ``remove()`` stops and deletes it.
    public static func start() throws -> PostgresTestServer {
        guard let binaries else { throw Failure(description: "PostgreSQL tests need a server: \(skipReason)") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("moonrunner-pg-\(UUID().uuidString)")
        for folder in [directory, directory.appendingPathComponent("socket")] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try handToServerUser(folder)
        }
        try watchForCrash(of: directory, binaries: binaries)
        let data = directory.appendingPathComponent("data").path
        // trust on loopback only: the server listens on 127.0.0.1 and its socket is in a private directory.
        try run("\(binaries)/initdb", ["-D", data, "-U", "moonrunner", "--auth=trust", "-E", "UTF8", "--locale=C",
                                       "--no-sync"])
        var lastError: Error?
        for _ in 0..<3 {
            let port = try freePort()
            let server = PostgresTestServer(adminURL: "postgres://moonrunner@127.0.0.1:\(port)/postgres", port: port,
                                            directory: directory)
            do {
                try server.startServer()
                return server
            } catch {
                lastError = error  // most likely the port was taken meanwhile: another one
            }
        }
        try? FileManager.default.removeItem(at: directory)
        throw lastError ?? Failure(description: "cannot start PostgreSQL")
    }

    /// Starts the server again after ``stop()``, on the same port and data.
    public func startServer() throws {
        guard let directory, let binaries = Self.binaries else { throw Failure(description: "not a server of ours") }
        let socket = directory.appendingPathComponent("socket").path
        // The tests' data is thrown away: no fsync. Many stores at once: four connections each.
        let options = "-p \(port) -k \(socket) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off "
            + "-c full_page_writes=off -c max_connections=400"
        let log = directory.appendingPathComponent("postgres.log").path
        do {
            try Self.run("\(binaries)/pg_ctl", ["start", "-D", directory.appendingPathComponent("data").path, "-l", log,
                                                "-w", "-t", "60", "-o", options], capturingOutput: false)
        } catch {
            let tail = (try? String(contentsOfFile: log, encoding: .utf8))?.split(separator: "\n").suffix(5) ?? []
            throw Failure(description: "\(error); postgres.log: \(tail.joined(separator: " | "))")
        }
    }

    /// Leaves behind a watchdog that stops the server and deletes its directory once this process is gone, so a
    /// test process that crashes (no atexit) leaves no server running. It polls: nothing wakes it at our death.
    private static func watchForCrash(of directory: URL, binaries: String) throws {
        let data = directory.appendingPathComponent("data").path
        let stop = (isRoot ? "/usr/sbin/runuser -u postgres -- " : "") + "'\(binaries)/pg_ctl' stop -D '\(data)' -m immediate"
        let script = "while kill -0 \(getpid()) 2>/dev/null && ! grep -q \"^State:.*Z\" /proc/\(getpid())/status 2>/dev/null; do sleep 1; done; \(stop) >/dev/null 2>&1; rm -rf '\(directory.path)'"
        _ = try ChildProcess(executable: "/bin/sh", arguments: ["-c", script], capturingOutput: false)
    }

    /// Stops the server (fast shutdown: sessions are ended, as when an operator stops it), keeping its data.
    public func stop() throws {
        guard let directory, let binaries = Self.binaries else { throw Failure(description: "not a server of ours") }
        try Self.run("\(binaries)/pg_ctl", ["stop", "-D", directory.appendingPathComponent("data").path,
                                            "-m", "fast", "-w", "-t", "60"], capturingOutput: false)
    }

    /// Stops the server at once and deletes its directory.
    public func remove() {
        guard let directory, let binaries = Self.binaries else { return }
        _ = try? Self.run("\(binaries)/pg_ctl", ["stop", "-D", directory.appendingPathComponent("data").path,
                                                 "-m", "immediate", "-w", "-t", "30"], capturingOutput: false)
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: Processes

    /// True when this process is root: the server's programs then run as `postgres`.
    private static var isRoot: Bool { geteuid() == 0 }

    /// Runs a PostgreSQL program to its end (as `postgres` when root); throws with its output when it fails.
    private static func run(_ program: String, _ arguments: [String], capturingOutput: Bool = true) throws {
        let (executable, all) = isRoot ? ("/usr/sbin/runuser", ["-u", "postgres", "--", program] + arguments)
                                       : (program, arguments)
        let child = try ChildProcess(executable: executable, arguments: all, capturingOutput: capturingOutput)
        let status = child.awaitExit(timeout: 120)
        guard status == 0 else {
            let name = (program as NSString).lastPathComponent
            throw Failure(description: "\(name) \(arguments.first ?? "") exited with \(status): "
                          + (child.standardError + child.standardOutput).trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// As root, gives a folder to the `postgres` user (initdb and the server refuse folders they do not own).
    private static func handToServerUser(_ folder: URL) throws {
        guard isRoot else { return }
        guard let user = getpwnam("postgres") else {
            throw Failure(description: "running as root, and there is no postgres user to run PostgreSQL as")
        }
        guard chown(folder.path, user.pointee.pw_uid, user.pointee.pw_gid) == 0, chmod(folder.path, 0o700) == 0 else {
            throw Failure(description: "cannot hand \(folder.path) to postgres: \(String(cString: strerror(errno)))")
        }
    }

    /// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then released).
    private static func freePort() throws -> UInt16 {
        // Bound to port 0, then released when the socket goes at the end of this line.
        try ListeningSocket(host: "127.0.0.1", port: 0).port
    }
}
