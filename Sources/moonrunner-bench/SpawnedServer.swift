import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn` (Foundation's `Process` crashes now and then on this toolchain:
/// swift-corelibs-foundation #5472): stdin and stdout to /dev/null, stderr to a log file.
final class SpawnedServer {
    let processID: pid_t
    private var exitStatus: Int32?

    /// A failure to spawn.
    struct SpawnError: Error, CustomStringConvertible {
        let description: String
    }

    init(executable: String, arguments: [String], logPath: String) throws(SpawnError) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let code = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard code == 0 else {
            throw SpawnError(description: "cannot start \(executable): \(String(cString: strerror(code)))")
        }
        processID = pid
    }

    /// True while the child has not exited (reaps it when it has).
    var isRunning: Bool {
        guard exitStatus == nil else { return false }
        var status: Int32 = 0
        let result = waitpid(processID, &status, WNOHANG)
        guard result == processID else { return result == 0 }
        exitStatus = Self.decode(status)
        return false
    }

    /// Sends SIGTERM.
    func terminate() { kill(processID, SIGTERM) }

    /// Waits for the child to exit; its exit status (128 + signal when killed).
    func waitUntilExit() -> Int32 {
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        while waitpid(processID, &status, 0) == -1 && errno == EINTR {}
        let decoded = Self.decode(status)
        exitStatus = decoded
        return decoded
    }

    private static func decode(_ status: Int32) -> Int32 {
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }
}
