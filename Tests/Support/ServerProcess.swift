import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The built `moonrunner` executable, next to the test bundle in the build folder.
public let moonrunnerExecutable: URL = {
    let me = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                 ?? CommandLine.arguments[0])
    var folder = me.deletingLastPathComponent()
    // Swift Testing may run from inside the .xctest bundle folder on some layouts.
    while !FileManager.default.isExecutableFile(atPath: folder.appendingPathComponent("moonrunner").path),
          folder.path != "/" {
        folder = folder.deletingLastPathComponent()
    }
    return folder.appendingPathComponent("moonrunner")
}()

/// A child process started with `posix_spawn`, its stdout and stderr collected; for `serve`, the port.
///
/// Not Foundation's `Process`: on Linux (Swift 6.3.1) `Process.run()` crashes now and then, reading past a
/// buffer while it lists `/proc/self/fd` (swift-corelibs-foundation PR #5472), which took down whole test runs.
public final class ChildProcess: @unchecked Sendable {
    /// The child's process id.
    public let pid: pid_t
    /// Guards everything below; broadcast on output, on exit and when a stream closes.
    private let condition = NSCondition()
    private var errorBytes: [UInt8] = []
    private var outputBytes: [UInt8] = []
    private var openStreams = 0
    private var status: Int32?

    /// An error from `pipe2` or `posix_spawn`.
    public struct SpawnError: Error, CustomStringConvertible {
        /// The errno.
        public let code: Int32
        public var description: String { "spawn failed: \(String(cString: strerror(code)))" }
    }

    /// Starts `moonrunner ARGUMENTS`.
    public convenience init(_ arguments: [String]) throws {
        try self.init(executable: moonrunnerExecutable.path, arguments: arguments)
    }

    /// Starts `executable ARGUMENTS` with stdin from /dev/null; stdout and stderr are collected, or sent to
    /// /dev/null when `capturingOutput` is false (for a child that leaves a daemon holding them open).
    public init(executable: String, arguments: [String], capturingOutput: Bool = true) throws {
        // Socket pairs rather than pipes: they can be made close-on-exec atomically (pipe2 is not visible to
        // Swift here), so a child spawned by another test at the same moment cannot inherit them.
        var output: [Int32] = [-1, -1], error: [Int32] = [-1, -1]
        if capturingOutput {
            let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            guard socketpair(AF_UNIX, type, 0, &output) == 0, socketpair(AF_UNIX, type, 0, &error) == 0 else {
                throw SpawnError(code: errno)
            }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if capturingOutput {
            posix_spawn_file_actions_adddup2(&actions, output[1], 1)
            posix_spawn_file_actions_adddup2(&actions, error[1], 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        // Nothing else of ours goes with it (after the dup2s above, which read two of these): `swift test` waits
        // for the end of the pipes it gave this process, and a child that outlived us holding one (the servers'
        // crash watchdogs) kept the run from ever ending. (glibc 2.34's posix_spawn_file_actions_addclosefrom_np;
        // Swift's Glibc module does not show it.)
        if let closeFrom = Self.closeFrom { _ = closeFrom(&actions, 3) }
        // The child starts with no signal blocked and default handlers, whatever the test thread had.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGTERM, SIGINT] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let environment: [UnsafeMutablePointer<CChar>?] =
            ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + environment).forEach { free($0) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, &attributes, argv, environment)
        if capturingOutput {
            close(output[1])
            close(error[1])
        }
        guard result == 0 else {
            if capturingOutput {
                close(output[0])
                close(error[0])
            }
            throw SpawnError(code: result)
        }
        pid = child
        let spawned = child
        if capturingOutput {
            openStreams = 2
            collect(output[0]) { $0.outputBytes += $1 }
            collect(error[0]) { $0.errorBytes += $1 }
        }
        Thread.detachNewThread { [self] in
            var raw: Int32 = 0
            while waitpid(spawned, &raw, 0) == -1 && errno == EINTR {}
            // Exit status, or 128 + the signal that ended it (as a shell reports it).
            let code = (raw & 0x7F) == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
            condition.lock()
            status = code
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Reads a pipe to its end on a thread of its own, waking anyone waiting for output.
    private func collect(_ fd: Int32, into append: @escaping @Sendable (ChildProcess, [UInt8]) -> Void) {
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                condition.lock()
                if count > 0 { append(self, Array(buffer[0..<count])) } else { openStreams -= 1 }
                condition.broadcast()
                condition.unlock()
                if count <= 0 { break }
            }
            close(fd)
        }
    }

    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    /// `posix_spawn_file_actions_addclosefrom_np`, looked up once (nil on an older glibc: then children inherit).
    private static let closeFrom: CloseFrom? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        else { return nil }
        return unsafeBitCast(symbol, to: CloseFrom.self)
    }()

    /// What the process wrote to stderr so far.
    public var standardError: String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: errorBytes, as: UTF8.self)
    }

    /// What the process wrote to stdout so far.
    public var standardOutput: String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: outputBytes, as: UTF8.self)
    }

    /// True until the process has exited.
    public var isRunning: Bool {
        condition.lock()
        defer { condition.unlock() }
        return status == nil
    }

    /// Waits until stderr (or stdout) contains `text`; returns everything so far.
    @discardableResult
    public func awaitOutput(containing text: String, onStandardError: Bool = true, timeout: Double = 30) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            let seen = String(decoding: onStandardError ? errorBytes : outputBytes, as: UTF8.self)
            if seen.contains(text) { return seen }
            guard condition.wait(until: deadline) else {
                throw TestClient.Timeout(waitingFor: text, seen: [String(decoding: errorBytes, as: UTF8.self),
                                                                  String(decoding: outputBytes, as: UTF8.self)])
            }
        }
    }

    /// The port from the server's `listening on HOST:PORT` log line.
    public func listeningPort(timeout: Double = 30) throws -> UInt16 {
        let text = try awaitOutput(containing: "listening on ", timeout: timeout)
        let line = text.components(separatedBy: "\n").first { $0.contains("listening on ") }!
        guard let port = UInt16(line.split(separator: ":").last!.trimmingCharacters(in: .whitespaces)) else {
            throw TestClient.Unexpected(expected: "a port", got: line)
        }
        return port
    }

    /// The port from the server's `http on http://HOST:PORT/` log line.
    public func httpPort(timeout: Double = 30) throws -> UInt16 {
        let text = try awaitOutput(containing: "http on http://", timeout: timeout)
        let line = text.components(separatedBy: "\n").first { $0.contains("http on http://") }!
        let address = line.components(separatedBy: "http://").last!.trimmingCharacters(in: CharacterSet(charactersIn: "/ "))
        guard let port = UInt16(address.split(separator: ":").last ?? "") else {
            throw TestClient.Unexpected(expected: "an http port", got: line)
        }
        return port
    }

    /// Sends a signal.
    public func signal(_ signal: Int32) {
        kill(pid, signal)
    }

    /// Asks the process to stop (SIGTERM).
    public func terminate() {
        signal(SIGTERM)
    }

    /// Waits for the exit (up to `timeout`; then SIGKILL) and for the output to end; returns the exit status.
    public func awaitExit(timeout: Double = 30) -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        while status == nil && condition.wait(until: deadline) {}
        if status == nil {
            condition.unlock()
            kill(pid, SIGKILL)
            condition.lock()
            while status == nil { condition.wait() }
        }
        // The last bytes may still be in the pipes: wait for their end (briefly, in case a grandchild has them).
        let drained = Date().addingTimeInterval(5)
        while openStreams > 0 && condition.wait(until: drained) {}
        defer { condition.unlock() }
        return status!
    }
}

/// Runs a program to its end with its output discarded; returns the exit status.
@discardableResult
public func runProgram(_ executable: String, _ arguments: [String], timeout: Double = 60) throws -> Int32 {
    try ChildProcess(executable: executable, arguments: arguments, capturingOutput: false).awaitExit(timeout: timeout)
}

/// A fresh temporary folder for one test.
public func temporaryFolder() -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("moonrunner-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
