import Foundation

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

/// A `moonrunner` child process whose stderr is collected; for `serve`, the port it listens on.
public final class ChildProcess: @unchecked Sendable {
    public let process = Process()
    private let errorPipe = Pipe()
    private let outputPipe = Pipe()
    private let lock = NSLock()
    private var errorText = ""
    private var outputText = ""
    private let lineArrived = NSCondition()

    /// Starts `moonrunner ARGUMENTS`.
    public init(_ arguments: [String], input: Bool = false) throws {
        process.executableURL = moonrunnerExecutable
        process.arguments = arguments
        process.standardError = errorPipe
        process.standardOutput = outputPipe
        if !input { process.standardInput = FileHandle.nullDevice }
        collect(errorPipe) { $0.errorText += $1 }
        collect(outputPipe) { $0.outputText += $1 }
        process.terminationHandler = { [weak self] _ in
            guard let self else { return }
            self.lineArrived.lock()
            self.lineArrived.broadcast()
            self.lineArrived.unlock()
        }
        try process.run()
    }

    /// Appends what arrives on a pipe, waking anyone waiting for output.
    private func collect(_ pipe: Pipe, into append: @escaping @Sendable (ChildProcess, String) -> Void) {
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.lineArrived.lock()
            append(self, String(decoding: data, as: UTF8.self))
            self.lineArrived.broadcast()
            self.lineArrived.unlock()
        }
    }

    /// What the process wrote to stderr so far.
    public var standardError: String {
        lineArrived.lock()
        defer { lineArrived.unlock() }
        return errorText
    }

    /// What the process wrote to stdout so far.
    public var standardOutput: String {
        lineArrived.lock()
        defer { lineArrived.unlock() }
        return outputText
    }

    /// Waits until stderr (or stdout) contains `text`; returns everything so far.
    @discardableResult
    public func awaitOutput(containing text: String, onStandardError: Bool = true, timeout: Double = 30) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        lineArrived.lock()
        defer { lineArrived.unlock() }
        while !(onStandardError ? errorText : outputText).contains(text) {
            guard lineArrived.wait(until: deadline) else {
                throw TestClient.Timeout(waitingFor: text, seen: [errorText, outputText])
            }
        }
        return onStandardError ? errorText : outputText
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

    /// Sends a signal.
    public func signal(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits for the exit (up to `timeout`) and returns the status; kills the process past the deadline.
    public func awaitExit(timeout: Double = 30) -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        lineArrived.lock()
        while process.isRunning && lineArrived.wait(until: deadline) {}
        lineArrived.unlock()
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        process.waitUntilExit()
        // The last bytes may still sit in the pipes after the exit: read them to the end.
        for (pipe, isError) in [(errorPipe, true), (outputPipe, false)] {
            pipe.fileHandleForReading.readabilityHandler = nil
            let rest = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            lineArrived.lock()
            if isError { errorText += rest } else { outputText += rest }
            lineArrived.unlock()
        }
        return process.terminationStatus
    }
}

/// A fresh temporary folder for one test.
public func temporaryFolder() -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("moonrunner-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
