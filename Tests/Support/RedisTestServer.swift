import Reactor
import ClusterBus
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real Redis server for tests. `MOONRUNNER_TEST_REDIS=redis://127.0.0.1:PORT` names one a script started
/// (`.ci/run` does); otherwise the first test that needs one starts Debian's `redis-server` on a free
/// 127.0.0.1 port with its files in a temporary directory, stopped and removed when the test process exits.
/// Tests that share it use stream and key names of their own.
///
/// Tests that stop or kill Redis start servers of their own (``start(appendOnly:)``): ``kill()`` ends one
/// at once (SIGKILL, as a crash), ``restart()`` starts it again on the same port and directory. With
/// `appendOnly` (`--appendonly yes --appendfsync always`) a restarted server has every entry it had taken;
/// without persistence it comes back empty.
public final class RedisTestServer: @unchecked Sendable {
    /// `redis://127.0.0.1:PORT`.
    public let url: String
    /// The TCP port on 127.0.0.1.
    public let port: UInt16
    /// Whether the server keeps an append-only file (a restart keeps the data).
    public let appendOnly: Bool
    /// The temporary directory (`redis.pid`, `appendonlydir`); nil for a server given by URL.
    private let directory: URL?
    /// Guards `process`.
    private let lock = NSLock()
    private var process: ChildProcess?

    /// The environment variable naming a server to use instead of starting one.
    public static let environmentVariable = "MOONRUNNER_TEST_REDIS"

    /// Where `redis-server` is, if installed.
    static let executable: String? = ["/usr/bin/redis-server", "/usr/local/bin/redis-server", "/usr/sbin/redis-server"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// True when Redis tests can run: a server is named, or `redis-server` is installed. Always true under
    /// `CI=true`, so that a missing Redis fails those tests there instead of skipping them.
    public static let isAvailable: Bool = {
        let environment = ProcessInfo.processInfo.environment
        if environment["CI"] == "true" || environment[environmentVariable] != nil || executable != nil { return true }
        FileHandle.standardError.write(Data("Redis tests skipped: \(skipReason)\n".utf8))
        return false
    }()

    /// True when this process may start servers of its own (the tests that kill and restart Redis need that).
    public static var canStartServers: Bool {
        ProcessInfo.processInfo.environment["CI"] == "true" || executable != nil
    }

    /// Why Redis tests are skipped here (for `.enabled(if:)` traits).
    public static let skipReason = "no \(environmentVariable) and no redis-server installed "
        + "(apt-get install redis-server, or set \(environmentVariable)=redis://127.0.0.1:PORT)"

    /// Failures starting a server.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private init(port: UInt16, appendOnly: Bool, directory: URL?, url: String? = nil) {
        self.port = port
        self.appendOnly = appendOnly
        self.directory = directory
        self.url = url ?? "redis://127.0.0.1:\(port)"
    }

    // MARK: The shared server

    private static let sharedLock = NSLock()
    nonisolated(unsafe) private static var sharedServer: Result<RedisTestServer, Failure>?

    /// The server of this test process: the one named by the environment, or one started on first use.
    public static func shared() throws -> RedisTestServer {
        sharedLock.lock()
        defer { sharedLock.unlock() }
        if let sharedServer { return try sharedServer.get() }
        let result: Result<RedisTestServer, Failure>
        if let url = ProcessInfo.processInfo.environment[environmentVariable] {
            let port = (try? RedisEndpoint(url: url)).map { UInt16($0.port) } ?? 0
            result = .success(RedisTestServer(port: port, appendOnly: false, directory: nil, url: url))
        } else {
            do {
                let server = try start()
                atexit { RedisTestServer.stopSharedAtExit() }
                result = .success(server)
            } catch let failure as Failure {
                result = .failure(failure)
            } catch {
                result = .failure(Failure(description: "\(error)"))
            }
        }
        sharedServer = result
        return try result.get()
    }

    private static func stopSharedAtExit() {
        guard case .success(let server) = sharedServer else { return }
        server.stop()
    }

    // MARK: A server of one's own

    /// Starts a throwaway server on a free port; ``stop()`` ends it and deletes its directory (a watchdog
    /// does both if this process dies first).
    public static func start(appendOnly: Bool = false) throws -> RedisTestServer {
        guard executable != nil else { throw Failure(description: "Redis tests need a server: \(skipReason)") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("moonrunner-redis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try watchForCrash(of: directory)
        var lastError: Error?
        for _ in 0..<3 {
            let server = RedisTestServer(port: try freePort(), appendOnly: appendOnly, directory: directory)
            do {
                try server.restart()
                return server
            } catch {
                lastError = error  // most likely the port was taken meanwhile: another one
            }
        }
        try? FileManager.default.removeItem(at: directory)
        throw lastError ?? Failure(description: "cannot start redis-server")
    }

    /// Starts the server (again, after ``kill()``) on its port and directory; returns once it answers PING.
    public func restart() throws {
        guard let directory, let executable = Self.executable else { throw Failure(description: "not a server of ours") }
        lock.lock()
        defer { lock.unlock() }
        precondition(process == nil || process?.isRunning == false, "restart() of a running server")
        let arguments = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--dir", directory.path,
                         "--pidfile", directory.appendingPathComponent("redis.pid").path, "--daemonize", "no",
                         "--appendonly", appendOnly ? "yes" : "no", "--appendfsync", "always", "--logfile", "",
                         "--loglevel", "notice"]
        let child = try ChildProcess(executable: executable, arguments: arguments)
        do {
            try child.awaitOutput(containing: "Ready to accept connections", onStandardError: false, timeout: 20)
        } catch {
            child.signal(SIGKILL)
            _ = child.awaitExit(timeout: 10)
            throw Failure(description: "redis-server on port \(port) did not start: "
                          + (child.standardOutput + child.standardError).suffix(600))
        }
        process = child
        // Ready means listening; PING proves it answers on that port.
        let redis = try RedisConnection(endpoint: RedisEndpoint(host: "127.0.0.1", port: Int(port)), connectTimeout: 5,
                                        commandTimeout: 5)
        guard try redis.command("PING") == .status("PONG") else { throw Failure(description: "no PONG on port \(port)") }
    }

    /// Ends the server at once (SIGKILL, as a crash: no final write) and waits until it is gone.
    public func kill() {
        lock.lock()
        let child = process
        process = nil
        lock.unlock()
        guard let child else { return }
        child.signal(SIGKILL)
        _ = child.awaitExit(timeout: 30)
    }

    /// Stops the server and deletes its directory (nothing for a server given by URL).
    public func stop() {
        kill()
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    /// Leaves a watchdog that kills the server and deletes its directory once this process is gone, so a test
    /// process that crashes (no atexit) leaves no server running. It polls: nothing wakes it at our death.
    private static func watchForCrash(of directory: URL) throws {
        let pidFile = directory.appendingPathComponent("redis.pid").path
        let script = "while kill -0 \(getpid()) 2>/dev/null && ! grep -q \"^State:.*Z\" /proc/\(getpid())/status 2>/dev/null; do sleep 1; done; "
            + "[ -f '\(pidFile)' ] && kill -9 \"$(cat '\(pidFile)')\" 2>/dev/null; rm -rf '\(directory.path)'"
        _ = try ChildProcess(executable: "/bin/sh", arguments: ["-c", script], capturingOutput: false)
    }

    /// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then released).
    private static func freePort() throws -> UInt16 {
        // Bound to port 0, then released when the socket goes at the end of this line.
        try ListeningSocket(host: "127.0.0.1", port: 0).port
    }
}
