@testable import Broadcaster
import Glibc
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
        for index in 0..<20 { buffer.append(line("pace:ann n=\(index)"), paceOf: "ann", highWaterMark: 64) }
        let written = drain(&buffer, accepting: 1 << 20)
        #expect(written.split(separator: "\n").count == 20)
        #expect(!buffer.isCongested && buffer.isEmpty)
    }

    @Test func aCongestedReaderGetsTheNewestPaceAfterEverythingThatMustNotBeDropped() {
        var buffer = OutputBuffer()
        for index in 0..<10 { buffer.append(line("pace:ann n=\(index)"), paceOf: "ann", highWaterMark: 64) }
        _ = drain(&buffer, accepting: 10)  // the socket took 10 bytes: the reader is behind
        #expect(buffer.isCongested)
        var replaced = 0
        for index in 10..<30 where buffer.append(line("pace:ann n=\(index)"), paceOf: "ann", highWaterMark: 64) {
            replaced += 1
        }
        #expect(replaced == 19, "one pending pace line, replaced by each newer one")
        buffer.append(line("end:ann run=1"), paceOf: nil, highWaterMark: 64)
        let rest = drain(&buffer, accepting: 1 << 20).split(separator: "\n")
        #expect(rest.suffix(2) == ["pace:ann n=29", "end:ann run=1"], "the newest position, then the end, in order")
    }

    @Test func severalPendingLinesGoOutInOneGatheredWrite() {
        var buffer = OutputBuffer()
        for index in 0..<5 { buffer.append(line("pace:ann n=\(index)"), paceOf: "ann", highWaterMark: 64) }
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
        for index in 0..<4 { buffer.append(line("split:ann km=\(index)"), paceOf: nil, highWaterMark: 1 << 20) }
        let first = drain(&buffer, accepting: 20, highWaterMark: 1 << 20)  // stops inside the second line
        #expect(buffer.isCongested && buffer.pendingBytes == 4 * line("split:ann km=0").count - 20)
        let rest = drain(&buffer, accepting: 1 << 20, highWaterMark: 1 << 20)
        #expect(first + rest == (0..<4).map { "split:ann km=\($0)\n" }.joined())
    }

    @Test func thePerTurnLimitCutsTheGatheredWriteWithoutCountingAsCongested() {
        var buffer = OutputBuffer()
        for index in 0..<3 { buffer.append(line("split:ann km=\(index)"), paceOf: nil, highWaterMark: 1 << 20) }
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
        first.append(shared, paceOf: "ann", highWaterMark: 64)
        second.append(cache.share(event), paceOf: "ann", highWaterMark: 64)
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
}
