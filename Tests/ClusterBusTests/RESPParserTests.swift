import Foundation
@testable import ClusterBus
import Testing

/// The RESP2 reader on its own: every type, replies split anywhere, and what Redis never sends refused with a
/// clear error instead of a crash or an allocation the bytes do not pay for.
struct RESPParserTests {
    /// Parses `bytes` given in one piece; every whole reply in order.
    private func replies(_ text: String, limits: RESPParser.Limits = .init()) throws(BusError) -> [RedisValue] {
        try replies(Array(text.utf8), limits: limits)
    }

    private func replies(_ bytes: [UInt8], limits: RESPParser.Limits = .init()) throws(BusError) -> [RedisValue] {
        var parser = RESPParser(limits: limits)
        parser.append(contentsOf: bytes)
        var values: [RedisValue] = []
        while let value = try parser.nextReply() { values.append(value) }
        return values
    }

    /// An XREAD-like reply: nested arrays, a null, an empty array, binary bulks holding CR LF and RESP markers.
    private static let nested: [UInt8] = Array((
        "*3\r\n" +
        "*2\r\n$11\r\nruns:stream\r\n*1\r\n*2\r\n$15\r\n1700000000000-7\r\n*2\r\n$1\r\ne\r\n$6\r\n"
    ).utf8) + [0, 13, 10, 36, 42, 255] + Array((
        "\r\n" +
        "*-1\r\n" +
        "*0\r\n" +
        "+OK\r\n-WRONGTYPE Operation against a key\r\n:-42\r\n$0\r\n\r\n$-1\r\n"
    ).utf8)

    private static let nestedValues: [RedisValue] = [
        .array([
            .array([.string(Array("runs:stream".utf8)),
                    .array([.array([.string(Array("1700000000000-7".utf8)),
                                    .array([.string([101]), .string([0, 13, 10, 36, 42, 255])])])])]),
            .null,
            .array([]),
        ]),
        .status("OK"), .error("WRONGTYPE Operation against a key"), .integer(-42), .string([]), .null,
    ]

    @Test func everyTypeParsesAndPipelinedRepliesComeInOrder() throws {
        #expect(try replies(Self.nested) == Self.nestedValues)
        #expect(try replies(":0\r\n:9223372036854775807\r\n:-9223372036854775807\r\n")
                == [.integer(0), .integer(.max), .integer(-.max)])
    }

    @Test func aReplySplitAtEveryByteParsesTheSame() throws {
        // Two pieces, cut at every place.
        for cut in 0...Self.nested.count {
            var parser = RESPParser()
            var values: [RedisValue] = []
            parser.append(contentsOf: Self.nested[..<cut])
            while let value = try parser.nextReply() { values.append(value) }
            parser.append(contentsOf: Self.nested[cut...])
            while let value = try parser.nextReply() { values.append(value) }
            #expect(values == Self.nestedValues, "cut at \(cut)")
            #expect(!parser.isInsideReply)
        }
        // One byte at a time: nothing comes out before its last byte.
        var parser = RESPParser()
        var values: [RedisValue] = []
        for byte in Self.nested {
            parser.append(contentsOf: [byte])
            while let value = try parser.nextReply() { values.append(value) }
        }
        #expect(values == Self.nestedValues)
    }

    @Test func negativeAndOversizedLengthsAreClearErrors() {
        var limits = RESPParser.Limits()
        limits.bulkBytes = 1_000
        limits.arrayElements = 100
        let refused: [(String, String)] = [
            ("$-2\r\n", "bulk length of -2"),
            ("*-5\r\n", "array length of -5"),
            ("$1001\r\n", "bulk of 1001 bytes"),
            ("$99999999999999999999\r\n", "20 digits"),
            ("*101\r\n", "array of 101 elements"),
            ("$9223372036854775808\r\n", "past 64 bits"),
        ]
        for (text, said) in refused {
            do {
                _ = try replies(text, limits: limits)
                Issue.record("\(text.debugDescription) was taken")
            } catch {
                #expect(error.kind == .unexpectedReply, "\(text.debugDescription)")
                #expect(error.message.contains(said), "\(text.debugDescription): \(error.message)")
            }
        }
    }

    @Test func aLengthReservesNothingTheBytesDoNotPayFor() throws {
        // The largest lengths allowed, with nothing behind them: no reply yet, and only the header held.
        var parser = RESPParser()
        parser.append(contentsOf: Array("*1048576\r\n$67108864\r\n".utf8))
        #expect(try parser.nextReply() == nil)
        #expect(parser.bufferedBytes == "$67108864\r\n".utf8.count)
        #expect(parser.isInsideReply)
    }

    @Test func whatRedisNeverSendsIsRefused() throws {
        var limits = RESPParser.Limits()
        limits.depth = 3
        limits.lineBytes = 16
        let deep = String(repeating: "*1\r\n", count: 4) + ":1\r\n"
        let refused: [String] = [
            "_\r\n",                  // RESP3 null
            "%1\r\n",                 // RESP3 map
            "x\r\n",
            ":12a\r\n", ":+1\r\n", ":\r\n", ":-\r\n", ": 1\r\n",
            "+OK\n",                  // LF without CR
            "+O\rK\r\n",              // CR without LF
            "$3\r\nabcd\r\n",         // bulk not followed by CR LF
            "$3\r\nab\r\n\r\n",
            deep,
            "+" + String(repeating: "a", count: 17) + "\r\n",
            "+" + String(repeating: "a", count: 40),  // too long even before its end comes
        ]
        for text in refused {
            #expect(throws: BusError.self, "\(text.debugDescription)") { try replies(text, limits: limits) }
        }
        // Within the limits the same shapes are fine.
        #expect(try replies(String(repeating: "*1\r\n", count: 3) + ":1\r\n", limits: limits)
                == [.array([.array([.array([.integer(1)])])])])
        #expect(try replies("+" + String(repeating: "a", count: 16) + "\r\n", limits: limits)
                == [.status(String(repeating: "a", count: 16))])
    }

    @Test func aReplyLargerThanItsLimitIsRefusedBeforeItIsWhole() throws {
        var limits = RESPParser.Limits()
        limits.replyBytes = 4_096
        var parser = RESPParser(limits: limits)
        parser.append(contentsOf: Array("*1000\r\n".utf8))
        var refused: BusError?
        for _ in 0..<1_000 {
            parser.append(contentsOf: Array("$10\r\n0123456789\r\n".utf8))
            do {
                _ = try parser.nextReply()
            } catch {
                refused = error
                break
            }
        }
        #expect(refused?.message.contains("over 4096 bytes") == true)
    }

    /// Every seed of the fuzz target (`Fuzz/Corpus/resp-reply`), the crashes it found included, passes its check
    /// (it traps otherwise): a status line that is not UTF-8 reads back the same once written, however long its
    /// replacement characters make it.
    @Test func everyFuzzSeedPassesTheFuzzTargetsCheck() throws {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus/resp-reply")
        let names = try FileManager.default.contentsOfDirectory(atPath: corpus.path)
        #expect(names.contains("status-not-utf8-past-a-third-of-the-line"))
        for name in names {
            let seed = try Data(contentsOf: corpus.appendingPathComponent(name))
            seed.withUnsafeBytes { _ = RESPFuzzing.check($0) }
        }
    }

    @Test func commandsAreEncodedAsArraysOfBulks() throws {
        var buffer: [UInt8] = []
        RESPEncoder.append([Array("SET".utf8), Array("k".utf8), [0, 13, 10]], to: &buffer)
        RESPEncoder.append([Array("GET".utf8), Array(repeating: 120, count: 1234)], to: &buffer)
        #expect(Array(buffer.prefix(27)) == Array("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\n".utf8) + [0, 13, 10])
        // What we write, our reader reads back (a command is an array of bulk strings).
        #expect(try replies(buffer) == [
            .array([.string(Array("SET".utf8)), .string(Array("k".utf8)), .string([0, 13, 10])]),
            .array([.string(Array("GET".utf8)), .string(Array(repeating: 120, count: 1234))]),
        ])
    }
}
