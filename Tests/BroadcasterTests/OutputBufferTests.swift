@testable import Broadcaster
import Glibc
import HTTP
import MoonRunnerTestSupport
import Testing

/// The per-connection queue: order kept, pace lines conflated only for a reader that is behind.
@Suite(.mayBlock) struct OutputBufferTests {
    func line(_ text: String) -> [UInt8] { Array((text + "\n").utf8) }

    /// Drains what the buffer has; `accepting` bytes at most, as a socket with that much room would.
    func drain(_ buffer: inout OutputBuffer, accepting room: Int, highWaterMark: Int = 64) -> String {
        var taken: [UInt8] = []
        _ = buffer.drain(limit: 1 << 20, highWaterMark: highWaterMark) { vectors in
            let before = taken.count
            for vector in vectors where taken.count < room {
                let bytes = UnsafeRawBufferPointer(start: vector.iov_base, count: vector.iov_len)
                taken += bytes.prefix(room - taken.count)
            }
            return taken.count > before ? taken.count - before : nil
        }
        return String(decoding: taken, as: UTF8.self)
    }

    @Test func aBurstToAReaderThatKeepsUpIsNeverConflated() {
        var buffer = OutputBuffer()
        for index in 0..<20 { buffer.append(line("pace:ann n=\(index)"), as: .pace(of: "ann"), highWaterMark: 64) }
        let written = drain(&buffer, accepting: 1 << 20)
        #expect(written.split(separator: "\n").count == 20)
        #expect(!buffer.isCongested && buffer.isEmpty)
    }

    @Test func aCongestedReaderGetsTheNewestPaceAfterEverythingThatMustNotBeDropped() {
        var buffer = OutputBuffer()
        for index in 0..<10 { buffer.append(line("pace:ann n=\(index)"), as: .pace(of: "ann"), highWaterMark: 64) }
        _ = drain(&buffer, accepting: 10)  // the socket took 10 bytes: the reader is behind
        #expect(buffer.isCongested)
        var replaced = 0
        for index in 10..<30 where buffer.append(line("pace:ann n=\(index)"), as: .pace(of: "ann"), highWaterMark: 64) {
            replaced += 1
        }
        #expect(replaced == 19, "one pending pace line, replaced by each newer one")
        buffer.append(line("end:ann run=1"), as: .event(about: "ann"), highWaterMark: 64)
        let rest = drain(&buffer, accepting: 1 << 20).split(separator: "\n")
        #expect(rest.suffix(2) == ["pace:ann n=29", "end:ann run=1"], "the newest position, then the end, in order")
    }

    @Test func severalPendingLinesGoOutInOneGatheredWrite() {
        var buffer = OutputBuffer()
        for index in 0..<5 { buffer.append(line("pace:ann n=\(index)"), as: .pace(of: "ann"), highWaterMark: 64) }
        var writes: [Int] = []
        let total = buffer.drain(limit: 1 << 20, highWaterMark: 64) { vectors in
            writes.append(vectors.count)
            return vectors.reduce(0) { $0 + $1.iov_len }
        }
        #expect(writes == [5], "one write call carrying the five lines")
        #expect(total == 5 * line("pace:ann n=0").count && buffer.isEmpty)
    }

    @Test func aPartialWriteResumesMidLineWithTheRestInOrder() {
        var buffer = OutputBuffer()
        for index in 0..<4 { buffer.append(line("split:ann km=\(index)"), as: .event(about: "ann"), highWaterMark: 1 << 20) }
        let first = drain(&buffer, accepting: 20, highWaterMark: 1 << 20)  // stops inside the second line
        #expect(buffer.isCongested && buffer.pendingBytes == 4 * line("split:ann km=0").count - 20)
        let rest = drain(&buffer, accepting: 1 << 20, highWaterMark: 1 << 20)
        #expect(first + rest == (0..<4).map { "split:ann km=\($0)\n" }.joined())
    }

    @Test func thePerTurnLimitCutsTheGatheredWriteWithoutCountingAsCongested() {
        var buffer = OutputBuffer()
        for index in 0..<3 { buffer.append(line("split:ann km=\(index)"), as: .event(about: "ann"), highWaterMark: 1 << 20) }
        var offered: [Int] = []
        let total = buffer.drain(limit: 18, highWaterMark: 1 << 20) { vectors in
            offered.append(vectors.reduce(0) { $0 + $1.iov_len })
            return offered.last
        }
        #expect(offered == [18] && total == 18 && !buffer.isCongested)
        #expect(buffer.pendingBytes == 3 * line("split:ann km=0").count - 18)
    }

    @Test func aBroadcastLineIsQueuedByEveryRecipientFromOneCopy() {
        var cache = SharedLineCache()
        let event = line("pace:ann n=1")
        var first = OutputBuffer(), second = OutputBuffer()
        let shared = cache.share(event)
        first.append(shared, as: .pace(of: "ann"), highWaterMark: 64)
        second.append(cache.share(event), as: .pace(of: "ann"), highWaterMark: 64)
        var addresses: [UnsafeMutableRawPointer?] = []
        for index in 0..<2 {
            var buffer = index == 0 ? first : second
            _ = buffer.drain(limit: 1 << 20, highWaterMark: 64) { vectors in
                addresses += vectors.map(\.iov_base)
                return vectors.reduce(0) { $0 + $1.iov_len }
            }
        }
        #expect(addresses.count == 2 && addresses[0] == addresses[1], "both writes read the one shared copy")
        #expect(addresses[0] == UnsafeMutableRawPointer(mutating: shared.bytes.baseAddress))
        let other = line("pace:ann n=1")  // equal bytes, another array: another line
        #expect(cache.share(other) !== shared)
    }

    /// An event stream's frame as the server makes it: `id:`, `event:` and the JSON `data:`.
    func frame(_ sequence: Int, _ event: String, _ json: String) -> [UInt8] {
        var bytes: [UInt8] = []
        ServerSentEvent.append(id: String(sequence), event: event, data: Array(json.utf8), to: &bytes)
        return bytes
    }

    /// A congested browser once got `end` and then a stale `pace`: the buffer took the runner from the text
    /// between the first colon and the first space, which in a frame (`id: 7`) is empty, so the end did not
    /// move the pending pace ahead of it. The role says the runner, whatever the bytes.
    @Test func aCongestedEventStreamGetsTheNewestPaceBeforeTheEndAndNoneAfter() {
        var buffer = OutputBuffer()
        var sequence = 0
        func pace(_ n: Int) -> [UInt8] {
            sequence += 1
            return frame(sequence, "pace", "{\"runner\":\"ann\",\"n\":\(n)}")
        }
        for n in 0..<10 { buffer.append(pace(n), as: .pace(of: "ann"), highWaterMark: 64) }
        _ = drain(&buffer, accepting: 10)
        #expect(buffer.isCongested)
        var conflated = 0
        for n in 10..<30 where buffer.append(pace(n), as: .pace(of: "ann"), highWaterMark: 64) { conflated += 1 }
        #expect(conflated == 19, "one pending pace frame, replaced by each newer one")
        sequence += 1
        buffer.append(frame(sequence, "end", "{\"runner\":\"ann\"}"), as: .event(about: "ann"), highWaterMark: 64)
        sequence += 1
        buffer.append(frame(sequence, "run", "{\"runner\":\"bob\"}"), as: .event(about: "bob"), highWaterMark: 64)
        let frames = drain(&buffer, accepting: 1 << 20).components(separatedBy: "\n\n").filter { !$0.isEmpty }
        let events = frames.suffix(3).map { $0.split(separator: "\n").filter { !$0.hasPrefix("id:") }.joined(separator: " ") }
        #expect(events == ["event: pace data: {\"runner\":\"ann\",\"n\":29}", "event: end data: {\"runner\":\"ann\"}",
                           "event: run data: {\"runner\":\"bob\"}"], "the newest position, then the end; nothing of ann after it")
        #expect(buffer.isEmpty)
    }

    @Test func aReplyNeverMovesOrDropsARunnersPendingPace() {
        var buffer = OutputBuffer()
        for n in 0..<10 { buffer.append(line("pace:watch n=\(n)"), as: .pace(of: "watch"), highWaterMark: 64) }
        _ = drain(&buffer, accepting: 10)
        buffer.append(line("pace:watch n=10"), as: .pace(of: "watch"), highWaterMark: 64)
        // A runner named like a command: `ok:watch …` is a reply, not an event of theirs.
        buffer.append(line("ok:watch target=watch"), as: .reply, highWaterMark: 64)
        buffer.append(line("pace:watch n=11"), as: .pace(of: "watch"), highWaterMark: 64)
        let lines = drain(&buffer, accepting: 1 << 20).split(separator: "\n")
        #expect(lines.suffix(2) == ["ok:watch target=watch", "pace:watch n=11"], "the reply in order, then only the newest pace")
        #expect(!lines.contains("pace:watch n=10"), "the reply did not push out a position a newer one replaced")
    }
}
