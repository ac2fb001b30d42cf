import Foundation
import Testing
@testable import HTTP

/// The fuzzing seed corpus doubles as a test: each file's name says what it must give
/// (`ok-…`: requests and no error, `400-…`: that status), and the fuzz entry point's checks hold.
@Suite struct CorpusTests {
    static let files: [URL] = {
        guard let directory = Bundle.module.url(forResource: "Corpus", withExtension: nil),
              let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [] }
        return names.sorted().map { directory.appendingPathComponent($0) }
    }()

    @Test func thereIsASeedCorpus() {
        #expect(Self.files.count >= 12)
    }

    @Test(arguments: files) func eachSeedGivesWhatItsNameSays(_ file: URL) throws {
        let bytes = try [UInt8](Data(contentsOf: file))
        let expected = file.lastPathComponent.split(separator: "-").first.map(String.init) ?? ""
        let result = outcome(bytes)
        if expected == "ok" {
            #expect(result.error == nil)
            #expect(!result.requests.isEmpty)
            #expect(!result.hasPartialRequest)
        } else {
            #expect(result.error?.status.code == Int(expected))
        }
        let count = bytes.withUnsafeBytes { HTTPRequestParser.fuzz($0) }
        #expect(count == result.requests.count)
    }

    @Test func theFuzzEntrySurvivesMutatedSeeds() throws {
        // A poor man's fuzzer: every seed with each byte in turn replaced by a few hostile values.
        for file in Self.files.prefix(6) {
            let seed = try [UInt8](Data(contentsOf: file)).prefix(200)
            for index in seed.indices {
                for replacement: UInt8 in [0, 0x0D, 0x0A, 0x20, 0x3A, 0xFF] {
                    var mutated = Array(seed)
                    mutated[index] = replacement
                    mutated.withUnsafeBytes { _ = HTTPRequestParser.fuzz($0) }
                }
            }
        }
    }
}

/// Every input the fuzzer keeps (Fuzz/Corpus/http-request, its reproducers included) goes through the fuzz
/// entry point in the plain test run too, so a regression shows without a fuzzing build.
@Suite struct FuzzCorpusReplayTests {
    static let files: [URL] = {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus/http-request")
        return ((try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? [])
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }()

    @Test func theFuzzCorpusIsThere() {
        #expect(!Self.files.isEmpty)
    }

    @Test(arguments: files.map(\.lastPathComponent))
    func readsTheSameWholeAndInPieces(name: String) throws {
        let url = try #require(Self.files.first { $0.lastPathComponent == name })
        let data = try Data(contentsOf: url)
        let whole = data.withUnsafeBytes { HTTPRequestParser.outcome(of: $0) }
        let bytewise = data.withUnsafeBytes { HTTPRequestParser.outcome(of: $0, pieceSize: 1) }
        let uneven = data.withUnsafeBytes { HTTPRequestParser.outcome(of: $0, pieceSize: 7) }
        #expect(whole == bytewise && whole == uneven, "\(name): \(whole) vs \(bytewise)")
    }
}
