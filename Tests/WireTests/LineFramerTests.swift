import Testing
@testable import Wire

/// Drains the framer into readable results.
private func drain(_ framer: inout LineFramer) -> [String] {
    var results: [String] = []
    while let next = framer.nextLine() {
        switch next {
        case .line(let bytes): results.append(String(decoding: bytes, as: UTF8.self))
        case .tooLong: results.append("<too long>")
        }
    }
    return results
}

@Suite struct LineFramerTests {
    @Test func splitsManyLinesInOneAppend() {
        var framer = LineFramer()
        framer.append(Array("a:1\nb:2\r\n\nc:3\n".utf8))
        #expect(drain(&framer) == ["a:1", "b:2", "", "c:3"])
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func joinsLinesSplitAcrossAppends() {
        var framer = LineFramer()
        framer.append(Array("loc:1,2".utf8))
        #expect(drain(&framer) == [])
        framer.append(Array(",3,4\r".utf8))
        #expect(drain(&framer) == [])
        framer.append(Array("\nping:".utf8))
        #expect(drain(&framer) == ["loc:1,2,3,4"])
        #expect(framer.bufferedByteCount == 5)
        framer.append(Array("\n".utf8))
        #expect(drain(&framer) == ["ping:"])
    }

    @Test(arguments: [1, 2, 3, 7, 64, 4096])
    func anyChunkingGivesTheSameLines(chunkSize: Int) {
        var text = ""
        for index in 0..<300 {
            text += index % 2 == 0 ? "pace:r\(index) dist=\(index).00\n" : "msg:é🌙 \(index)\r\n"
        }
        text += String(repeating: "x", count: 100) + "\n" + "tail:end\n"
        let bytes = Array(text.utf8)
        var framer = LineFramer(maximumLineLength: 64)
        var lines: [String] = []
        var start = 0
        while start < bytes.count {
            let end = min(start + chunkSize, bytes.count)
            framer.append(bytes[start..<end])
            lines += drain(&framer)
            #expect(framer.bufferedByteCount <= 64 + 1 + chunkSize)
            start = end
        }
        #expect(lines.count == 302)
        #expect(lines[0] == "pace:r0 dist=0.00")
        #expect(lines[1] == "msg:é🌙 1")
        #expect(lines[300] == "<too long>")
        #expect(lines[301] == "tail:end")
    }

    @Test func tooLongLineIsReportedOnceAndSkippedUpToItsNewline() {
        var framer = LineFramer(maximumLineLength: 10)
        framer.append(Array("ok:1\n".utf8) + Array(repeating: UInt8(ascii: "z"), count: 25))
        #expect(drain(&framer) == ["ok:1", "<too long>"])
        #expect(framer.bufferedByteCount == 0)
        framer.append(Array(repeating: UInt8(ascii: "z"), count: 1000))
        #expect(drain(&framer) == [])
        #expect(framer.bufferedByteCount == 0)
        framer.append(Array("zzz\nnext:1\n".utf8))
        #expect(drain(&framer) == ["next:1"])
    }

    @Test func lineExactlyAtTheLimitPassesWithOrWithoutCR() {
        var framer = LineFramer(maximumLineLength: 10)
        framer.append(Array("0123456789\n0123456789\r\n01234567890\n0123456789\r\r\n".utf8))
        #expect(drain(&framer) == ["0123456789", "0123456789", "<too long>", "<too long>"])
    }

    @Test func oneByteAtATimeStaysBoundedAndReportsOnce() {
        var framer = LineFramer(maximumLineLength: 16)
        var results: [String] = []
        let long = Array(repeating: UInt8(ascii: "y"), count: 10_000) + Array("\nafter\n".utf8)
        for byte in long {
            framer.append([byte])
            results += drain(&framer)
            #expect(framer.bufferedByteCount <= 18)
        }
        #expect(results == ["<too long>", "after"])
    }

    @Test func manyAppendsWithoutDrainingStayBounded() {
        var framer = LineFramer(maximumLineLength: 100)
        for _ in 0..<1000 {
            framer.append(Array(repeating: UInt8(ascii: "q"), count: 50))
            #expect(framer.bufferedByteCount <= 100 + 1 + 50)
        }
        framer.append(Array("\nok:\n".utf8))
        #expect(drain(&framer) == ["<too long>", "ok:"])
    }

    @Test func bigAppendHoldingAnOverlongTailAfterCompleteLines() {
        var framer = LineFramer(maximumLineLength: 8)
        framer.append(Array("a:1\nb:2\n".utf8) + Array(repeating: UInt8(ascii: "w"), count: 50) + Array("\nc:3\n".utf8))
        #expect(drain(&framer) == ["a:1", "b:2", "<too long>", "c:3"])
    }

    @Test func rawBufferAppendAndCompaction() {
        var framer = LineFramer(maximumLineLength: 64)
        let line = Array("pace:ann dist=1.00\n".utf8)
        var count = 0
        for _ in 0..<2000 {
            line.withUnsafeBytes { framer.append($0) }
            // Leave a partial line behind every time so compaction has to move bytes.
            framer.append(Array("x".utf8))
            while case .line(let bytes)? = framer.nextLine() {
                #expect(bytes.count == 18 || bytes.count == 19)
                count += 1
            }
            framer.append(Array("\n".utf8))
            while case .line? = framer.nextLine() { count += 1 }
        }
        #expect(count == 4000)
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func finishReturnsTheUnterminatedTail() {
        var framer = LineFramer(maximumLineLength: 8)
        framer.append(Array("a:1\nquit:\r".utf8))
        #expect(drain(&framer) == ["a:1"])
        #expect(framer.finish() == .line(ArraySlice("quit:".utf8)))
        #expect(framer.finish() == nil)
        framer.append(Array(repeating: UInt8(ascii: "v"), count: 30))
        #expect(framer.finish() == .tooLong)
        #expect(framer.finish() == nil)
    }

    @Test func framedLinesParseAsCommands() throws {
        var framer = LineFramer()
        framer.append(Array("loc:1,2,3,4\r\nping:\n".utf8))
        guard case .line(let first)? = framer.nextLine(), case .line(let second)? = framer.nextLine() else {
            Issue.record("missing lines")
            return
        }
        #expect(try Command.parse(first) == .location(LocationCommand(latitude: 1, longitude: 2, accuracy: 3, timestamp: 4,
                                                                       timestampText: "4")))
        #expect(try Command.parse(second) == .ping)
    }

    @Test func appendingAgainAfterAnOverLongTailWasLeftBufferedIsSafe() {
        // A complete line and an over-long unterminated tail arrive together; the line is taken, the tail stays.
        var framer = LineFramer(maximumLineLength: 16)
        framer.append(Array("x\n".utf8) + Array(repeating: UInt8(ascii: "a"), count: 40))
        #expect(framer.nextLine() == .line(ArraySlice("x".utf8)))
        // Appending without draining further used to trap (a negative room for the tail).
        framer.append(Array(repeating: UInt8(ascii: "b"), count: 10))
        framer.append(Array("c\nping:\n".utf8))
        #expect(framer.nextLine() == .tooLong)
        #expect(framer.nextLine() == .line(ArraySlice("ping:".utf8)))
        #expect(framer.nextLine() == nil)
        // And when the next bytes start with the tail's newline, the tail is still reported too long.
        var other = LineFramer(maximumLineLength: 16)
        other.append(Array("x\n".utf8) + Array(repeating: UInt8(ascii: "a"), count: 40))
        _ = other.nextLine()
        other.append(Array("\nok:\n".utf8))
        #expect(other.nextLine() == .tooLong)
        #expect(other.nextLine() == .line(ArraySlice("ok:".utf8)))
        #expect(other.bufferedByteCount <= 16)
    }
}
