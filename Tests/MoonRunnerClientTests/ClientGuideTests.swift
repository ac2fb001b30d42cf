import Broadcaster
import Foundation
import MoonRunnerClient
import MoonRunnerTestSupport
import RunStore
import Synchronization
import Testing

/// README's "Client library" samples are the code of `ClientGuideSamples.swift`, which compiles with the client library
/// alone; here they run against a real server.
@Suite(.mayBlock, .quietMachine) struct ClientGuideTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The ```swift blocks of README.md (all in its "Client library" section), in order.
    static func guideBlocks() throws -> [String] {
        let guide = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        var blocks: [String] = []
        var current: [Substring]?
        for line in guide.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```swift" {
                current = []
            } else if let lines = current, line == "```" {
                blocks.append(lines.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    @Test func everySwiftBlockOfTheGuideIsCompiledCode() throws {
        let samples = try String(contentsOf: Self.root.appendingPathComponent(
            "Tests/MoonRunnerClientTests/ClientGuideSamples.swift"), encoding: .utf8)
        let blocks = try Self.guideBlocks()
        #expect(blocks.count >= 6)
        for block in blocks where !block.hasPrefix("// swift-tools-version") {
            #expect(samples.contains(block), "not in ClientGuideSamples.swift:\n\(block)")
        }
    }

    @Test func theGuidesPackageManifestNamesTheRightPackageAndProduct() async throws {
        let manifest = try #require(try Self.guideBlocks().first { $0.hasPrefix("// swift-tools-version") })
        let ours = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        #expect(manifest.contains(".product(name: \"MoonRunnerClient\", package: \"moonrunner\")"))
        #expect(ours.contains(".library(name: \"MoonRunnerClient\", targets: [\"MoonRunnerClient\"])"))
        // An app beside a checkout named `moonrunner`, as the guide lays it out; SwiftPM loads both manifests.
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let app = folder.appendingPathComponent("app")
        try FileManager.default.createDirectory(at: app.appendingPathComponent("Sources/RunnerApp"),
                                                withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: folder.appendingPathComponent("moonrunner"),
                                                   withDestinationURL: Self.root)
        try (manifest + "\n").write(to: app.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        try "import MoonRunnerClient\n".write(to: app.appendingPathComponent("Sources/RunnerApp/main.swift"),
                                              atomically: true, encoding: .utf8)
        let swift = try #require(Self.executable(named: "swift"))
        let describe = try ChildProcess(executable: swift, arguments: ["package", "--package-path", app.path, "describe"])
        #expect(await exitStatus(describe, timeout: 120) == 0, "\(describe.standardError)")
        #expect(describe.standardOutput.contains("MoonRunnerClient"))
    }

    /// The samples build their fixes before they join; on a loaded machine the join may take long enough for a
    /// first fix to look like a cached position, which is not what these tests are about.
    static func patient(_ configuration: inout ServerConfiguration) {
        configuration.tracker.filter.staleStartAge = 3600
    }

    static func executable(named name: String) -> String? {
        (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
            .map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test func theRunnerSampleRunsAndResumesItsNameWithTheKey() async throws {
        let store = MemoryRunStore()
        try await withServer(Self.patient, store: store) { server in
            let first = try await runOnce(as: "ann", key: nil, fixes: straightFixes(count: 30),
                                          host: "127.0.0.1", port: server.port)
            #expect(first.key.count == 32 && first.end.saved)
            let later = (Date().timeIntervalSince1970 + 60).rounded(.down)
            let second = try await runOnce(as: "ann", key: first.key, fixes: straightFixes(count: 30, from: later),
                                           host: "127.0.0.1", port: server.port)
            #expect(second.key == first.key && second.end.runID != first.end.runID)
            store.flush()
            #expect(try store.fixes(ofRun: second.end.runID).count == 30)
        }
    }

    @Test func theSpectatorSampleFollowsARunToItsEnd() async throws {
        try await withServer(Self.patient) { server in
            let (shown, showing) = AsyncStream.makeStream(of: String.self)
            let following = Task {
                try await follow("bob", host: "127.0.0.1", port: server.port) { showing.yield($0) }
            }
            var lines = shown.makeAsyncIterator()
            #expect(await lines.next() == "following bob")
            // 10 m/s for 170 s: past the first badges and kilometre.
            let run = try await runOnce(as: "bob", key: nil, fixes: straightFixes(count: 170, speed: 10),
                                        host: "127.0.0.1", port: server.port)
            let end = try await following.value
            #expect(end?.runID == run.end.runID)
            showing.finish()
            var seen: [String] = []
            while let line = await lines.next() { seen.append(line) }
            #expect(seen.contains("won The Moon"))
            #expect(seen.contains { $0.hasSuffix(" /km") || $0.hasSuffix(" /mi") })
        }
    }

    @Test func theViewModelSampleShowsPaceCheersAndTheConnection() async throws {
        try await withServer(Self.patient) { server in
            let port = server.port
            let model = try await MainActor.run { try LiveRunModel(following: "cat", host: "127.0.0.1", port: port) }
            defer { model.client.close() }
            await Self.change(of: model) { $0.connection == "live" }
            let runner = MoonRunnerClient(host: "127.0.0.1", port: server.port)
            defer { runner.close() }
            try await runner.join(name: "cat")
            for fix in straightFixes(count: 5) { try runner.send(fix) }
            await Self.change(of: model) { $0.distance != "–" }
            #expect(try await runner.cheer("thanks!") == 1)
            await Self.change(of: model) { !$0.cheers.isEmpty }
            #expect(await model.cheers == ["cat: thanks!"])
        }
    }

    /// Returns once `condition` holds for the model, checking at each `onChange`; after 100 s it records a
    /// failure and returns (a test fails, never hangs). The main actor is shared by the whole parallel suite:
    /// in full CI runs this test took up to 28 s with passing waits, and once a wait took over 30 s.
    @MainActor static func change(of model: LiveRunModel,
                                  until condition: @escaping @MainActor @Sendable (LiveRunModel) -> Bool) async {
        guard !condition(model) else { return }
        let slot = ResumeOnce()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            slot.set(continuation)
            model.onChange = { [weak model] in
                guard let model, condition(model) else { return }
                model.onChange = {}
                slot.resume()
            }
            Task {
                // Also looks every 100 ms. In about 1 of 8 runs of the suite `onChange` did not end the wait
                // although the model had changed (seen by this poll: mostly "live" with no pace yet), and the wait
                // ran out at 100 s. Why the wake-up is lost is not known (the delegate's calls and this helper
                // are serialized on the main queue here); the poll keeps the test about the model, not that.
                for _ in 0..<1_000 {
                    try? await Task.sleep(for: .milliseconds(100))
                    if condition(model) {
                        slot.resume()
                        return
                    }
                }
                if slot.resume() {
                    let state = "connection \(model.connection), distance \(model.distance), cheers \(model.cheers)"
                    Issue.record("the model did not change as expected within 100 s: \(state)")
                }
            }
        }
    }

    @Test func theReconnectSamplesResumeAndGiveUp() async throws {
        try await withServer(Self.patient) { server in
            let start = try await runOnce(as: "dan", key: nil, fixes: straightFixes(count: 3),
                                          host: "127.0.0.1", port: server.port)
            let phone = phoneClient(host: "127.0.0.1", port: server.port)
            defer { phone.close() }
            let later = (Date().timeIntervalSince1970 + 60).rounded(.down)
            let waiting = try await resume(as: "dan", key: start.key, unacknowledged: straightFixes(count: 10, from: later),
                                           on: phone)
            #expect((0...10).contains(waiting))
            let end = try await phone.stop()
            #expect(end.runner == "dan" && end.saved)
            try await printLatestRuns(of: "dan", on: phone)
            try await printLatestRuns(of: "nobody", on: phone)
        }
        let nobody = try FakeServer()
        let port = nobody.port
        nobody.close()
        let client = phoneClient(host: "127.0.0.1", port: port)
        defer { client.close() }
        #expect(try await join(as: "eve", on: client, givingUpAfter: 0.2) == nil)
    }
}

/// A continuation resumed by whoever comes first (the awaited change, or the deadline).
final class ResumeOnce: Sendable {
    private let continuation = Mutex<CheckedContinuation<Void, Never>?>(nil)
    func set(_ continuation: CheckedContinuation<Void, Never>) { self.continuation.withLock { $0 = continuation } }
    /// Resumes it if nobody did yet; true if this call did.
    @discardableResult
    func resume() -> Bool {
        guard let continuation = continuation.withLock({ $0.take() }) else { return false }
        continuation.resume()
        return true
    }
}
