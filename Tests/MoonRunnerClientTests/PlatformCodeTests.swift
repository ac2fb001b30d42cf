import Foundation
import MoonRunnerTestSupport
import Testing

/// The Apple-platform code cannot be compiled here, so it is kept in one small file that can be read whole.
@Suite(.mayBlock) struct PlatformCodeTests {
    /// Every Swift file of the client library, relative path → text.
    static func clientSources() throws -> [String: String] {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/MoonRunnerClient")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        var texts: [String: String] = [:]
        for file in files {
            texts[String(file.path.dropFirst(sources.path.count + 1))] = try String(contentsOf: file, encoding: .utf8)
        }
        return texts
    }

    @Test func darwinOnlyCodeIsInOneSmallFile() throws {
        let sources = try Self.clientSources()
        #expect(sources.count > 10)
        let darwin = sources.filter { $0.value.contains("#if canImport(Darwin)") || $0.value.contains("getStreamsToHost") }
        #expect(Array(darwin.keys) == ["Streams/DarwinStreams.swift"])
        // Linux files say `#if !canImport(Darwin)` around the whole file and have no `#else`.
        let branching = sources.filter { $0.key != "Streams/DarwinStreams.swift" && $0.value.contains("#else") }
        #expect(branching.isEmpty, "\(branching.keys)")
        let lines = try #require(darwin["Streams/DarwinStreams.swift"]).split(separator: "\n")
        #expect(lines.first == "#if canImport(Darwin)" && lines.last == "#endif" && lines.count < 150)
    }
}
