import Foundation
import RunCore
import MoonRunnerTestSupport
import Testing
@testable import RunStore

/// The text of a `fix_chunks` row: every double comes back bit for bit, and typical values are short.
@Suite(.mayBlock) struct FixChunkCodingTests {
    private static func text(_ value: Double) -> String {
        let text = ChunkText()
        FixChunkCoding.appendNumber(value, to: text)
        return String(decoding: text.bytes, as: UTF8.self)
    }

    private static func timeText(_ value: Double, base: Int64) -> String {
        let text = ChunkText()
        FixChunkCoding.appendTime(value, base: base, to: text)
        return String(decoding: text.bytes, as: UTF8.self)
    }

    @Test func decimalValuesAreWrittenAsTheirDecimals() {
        #expect(Self.text(51.5012345) == "51.5012345")
        #expect(Self.text(-0.1234567) == "-0.1234567")
        #expect(Self.text(4) == "4")
        #expect(Self.text(0.005) == "0.005")
        #expect(Self.text(-12.5) == "-12.5")
        #expect(Self.text(1_767_225_600) == "1767225600")
        #expect(Self.text(0) == "0")
        #expect(Self.text(-0.0) == "-0")
        #expect(Self.text(.nan) == "null")
        #expect(Self.text(.infinity) == "9e999")
        #expect(Self.text(-.infinity) == "-9e999")
        // Not a short decimal: Swift's shortest round-trip form.
        #expect(Self.text(0.1 + 0.2) == "0.30000000000000004")
        #expect(Self.text(1e300) == "1e+300")
    }

    @Test func everyDoubleComesBackBitForBit() throws {
        var generator = SeededRandom(seed: 12)
        var values: [Double] = [0, -0.0, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude,
                                .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .infinity, -.infinity,
                                9_007_199_254_740_992, 9_007_199_254_740_994, 4_503_599_627_370_495.5, 1e22, 1e23,
                                123_456_789_012_345_680, 0.1, 0.2, 0.3, 1.0 / 3.0, 2.0 / 3.0, 1e-7, 1e-22]
        for _ in 0..<20_000 {
            values.append(Double(bitPattern: generator.next()))  // anything, NaN payloads included
            // Decimal text as a phone sends it, 0 to 9 decimals.
            let decimals = Int(generator.next() % 10)
            let integer = Double(Int64(bitPattern: generator.next() % 400_000_000_000) - 200_000_000_000)
            values.append(integer / pow(10, Double(decimals)))
            values.append(Double("\(Int(generator.next() % 180)).\(generator.next() % 10_000_000)")!)
        }
        for value in values {
            let written = Self.text(value)
            let read = try #require(FixChunkCoding.parseNumber(written), "\(written) does not parse")
            if value.isNaN {
                #expect(read.isNaN, "\(written)")
            } else {
                #expect(read.bitPattern == value.bitPattern, "\(value) was written \(written), read \(read)")
            }
        }
    }

    /// The writer carries from one latitude (longitude) to the next the decimals it needed; whatever that hint
    /// says, right or wrong, the text is the one written without it, and the hint left is right for the value.
    @Test func theDecimalsHintNeverChangesTheText() {
        var generator = SeededRandom(seed: 7)
        var values: [Double] = [0, -0.0, 4, 51.5, 51.5012345, -0.1234567, 0.1 + 0.2, 1e300, .nan, .infinity, 1e-7]
        for _ in 0..<5_000 {
            let decimals = Int(generator.next() % 10)
            let integer = Double(Int64(bitPattern: generator.next() % 400_000_000_000) - 200_000_000_000)
            values.append(integer / pow(10, Double(decimals)))
            values.append(Double(bitPattern: generator.next()))
        }
        for value in values {
            let plain = Self.text(value)
            for start in [-1, 0, 1, 3, 6, 7, 9, 17, 18] {
                var hint = start
                let text = ChunkText()
                FixChunkCoding.appendNumber(value, hint: &hint, to: text)
                #expect(String(decoding: text.bytes, as: UTF8.self) == plain, "\(value) with hint \(start)")
                if hint >= 0 {
                    var again = hint
                    let second = ChunkText()
                    FixChunkCoding.appendNumber(value, hint: &again, to: second)
                    #expect(again == hint && second.bytes == text.bytes, "\(value): the hint left is stable")
                }
            }
        }
    }

    /// Times carry a hint too (a phone's timestamps and the receive clock keep their places from fix to fix):
    /// whatever it says, the offset written gives the time back, and for the times a clock gives it is the
    /// same text as without the hint.
    @Test func theTimeHintNeverLosesATime() throws {
        let base: Int64 = 1_767_225_600
        var generator = SeededRandom(seed: 9)
        var times: [Double] = [Double(base), Double(base) + 0.5, Double(base) - 1, 1e-300, .nan, .infinity]
        for _ in 0..<3_000 {
            times.append(Double(base) + Double(generator.next() % 100_000_000) / 1000 - 50_000)
            times.append(Double(base) + Double(generator.next() % 1_000_000_000_000) / 1e6)
            times.append(Double(base) + Double(generator.next() % 60_000_000) / 1e7)
            times.append(Double(bitPattern: generator.next()))
        }
        for time in times {
            let plain = Self.timeText(time, base: base)
            for start in [-1, 0, 1, 3, 6, 7, 9, 17, 18] {
                var hint = start
                let text = ChunkText()
                FixChunkCoding.appendTime(time, base: base, hint: &hint, to: text)
                let written = String(decoding: text.bytes, as: UTF8.self)
                let fields = try FixChunkCoding.decodeFields(Array("[[0,0,0,\(written),0]]".utf8), base: base)
                let read = try #require(fields.first).timestamp
                #expect(time.isNaN ? read.isNaN : read.bitPattern == time.bitPattern, "\(time) hint \(start): \(written)")
                if time.isFinite, time.magnitude < 1e12 {
                    #expect(written == plain, "\(time) with hint \(start)")
                }
            }
        }
    }

    @Test func timesAreShortOffsetsFromTheBase() throws {
        let base: Int64 = 1_767_225_600
        #expect(Self.timeText(1_767_225_612, base: base) == "12")
        #expect(Self.timeText(1_767_225_600.5, base: base) == "0.5")
        #expect(Self.timeText(1_767_225_599, base: base) == "-1")
        #expect(Self.timeText(.nan, base: base) == "null")
        #expect(Self.timeText(.infinity, base: base) == "9e999")
        // A receive clock to the sub-microsecond: 10 characters, not 18.
        let clock = 1_767_225_600.123_456_7
        #expect(Self.timeText(clock, base: base).count <= 10)
        // A phone's nonsense far from the clock: written whole.
        #expect(Self.timeText(1e-300, base: base) == "[1e-300]")
        #expect(Self.timeText(-0.0, base: 0) == "[-0]")

        var generator = SeededRandom(seed: 7)
        var times: [Double] = [0, -0.0, 1e-300, -1e300, 1e300, .greatestFiniteMagnitude, .leastNonzeroMagnitude,
                               Double(base), Double(base) + 0.1, Double(base) - 1e-7]
        for _ in 0..<20_000 {
            times.append(Double(base) + Double(generator.next() % 100_000_000) / 1000 - 50_000)
            times.append(Double(base) + Double(generator.next() % 1_000_000_000_000) / 1e6)
            times.append(Double(bitPattern: generator.next()))
        }
        for time in times {
            for origin in [base, 0, -base, Int64(1e15)] {
                let written = Self.timeText(time, base: origin)
                let fields = try FixChunkCoding.decodeFields(Array("[[0,0,0,\(written),\(written)]]".utf8), base: origin)
                let read = try #require(fields.first).timestamp
                if time.isNaN {
                    #expect(read.isNaN)
                } else {
                    #expect(read.bitPattern == time.bitPattern, "\(time) from \(origin) was written \(written)")
                }
            }
        }
    }

    @Test func aChunkRoundTripsWithRejectionsAndOddValues() throws {
        let fixes = [
            StoredFix(runID: 3, sequence: 10, fix: Fix(latitude: 51.5, longitude: -0.12, accuracy: 4, timestamp: 1_767_225_600),
                      received: 1_767_225_600.250_123_4),
            StoredFix(runID: 3, sequence: 11, fix: Fix(latitude: .nan, longitude: .infinity, accuracy: .nan, timestamp: .nan),
                      received: 1_767_225_601, rejection: .invalid),
            StoredFix(runID: 3, sequence: 12, fix: Fix(latitude: 51.50001, longitude: -0.11999, accuracy: 65, timestamp: 1e-300),
                      received: 1_767_225_602.5, rejection: .stale),
        ]
        let base = FixChunkCoding.baseTime(for: fixes[0])
        #expect(base == 1_767_225_600)
        let text = FixChunkCoding.encode(fixes, base: base)
        #expect(String(decoding: text, as: UTF8.self) == """
            [[51.5,-0.12,4,0,0.2501235],[null,9e999,null,null,1,"invalid"],[51.50001,-0.11999,65,[1e-300],2.5,"stale"]]
            """)
        var read: [StoredFix] = []
        try text.withUnsafeBufferPointer { (buffer) throws(StoreError) in
            try FixChunkCoding.decode(buffer, run: 3, firstSequence: 10, count: 3, base: base, into: &read)
        }
        #expect(read.count == 3)
        #expect(read.map(\.sequence) == [10, 11, 12])
        #expect(read.map(FixChunkCoding.Fields.init) == fixes.map(FixChunkCoding.Fields.init))
        #expect(read.map(\.rejection) == [nil, .invalid, .stale])
    }

    @Test func altitudesAreASeventhElementAndOldChunksReadWithout() throws {
        let fixes = [
            StoredFix(runID: 3, sequence: 1, fix: Fix(latitude: 51.5, longitude: -0.12, accuracy: 4, timestamp: 1_767_225_600,
                                                      altitude: 74.2), received: 1_767_225_600.5),
            StoredFix(runID: 3, sequence: 2, fix: Fix(latitude: 51.5, longitude: -0.12, accuracy: 4, timestamp: 1_767_225_601,
                                                      altitude: -3.25), received: 1_767_225_601.5, rejection: .jump),
            StoredFix(runID: 3, sequence: 3, fix: Fix(latitude: 51.5, longitude: -0.12, accuracy: 4, timestamp: 1_767_225_602),
                      received: 1_767_225_602.5),
        ]
        let base = FixChunkCoding.baseTime(for: fixes[0])
        let text = FixChunkCoding.encode(fixes, base: base)
        #expect(String(decoding: text, as: UTF8.self)
            == #"[[51.5,-0.12,4,0,0.5,null,74.2],[51.5,-0.12,4,1,1.5,"jump",-3.25],[51.5,-0.12,4,2,2.5]]"#)
        var read: [StoredFix] = []
        try text.withUnsafeBufferPointer { (buffer) throws(StoreError) in
            try FixChunkCoding.decode(buffer, run: 3, firstSequence: 1, count: 3, base: base, into: &read)
        }
        #expect(read == fixes)
        #expect(try FixChunkCoding.decodeFields(text, base: base) == fixes.map(FixChunkCoding.Fields.init))
        // A chunk written before altitudes were kept: six elements at most, no altitude.
        let old = Array(#"[[51.5,-0.12,4,0,0.5],[51.5,-0.12,4,1,1.5,"jump"],[51.5,-0.12,4,2,2.5,null]]"#.utf8)
        read = []
        try old.withUnsafeBufferPointer { (buffer) throws(StoreError) in
            try FixChunkCoding.decode(buffer, run: 3, firstSequence: 1, count: 3, base: base, into: &read)
        }
        #expect(read.map(\.fix.altitude) == [nil, nil, nil])
        #expect(read.map(\.rejection) == [nil, .jump, nil])
    }

    @Test func aDamagedChunkIsCorruptNotGarbage() {
        let damaged = ["", "[", "[[1,2,3,4]]", "[[1,2,3,4,5]", "[[1,2,3,4,5]]x", "[[1,2,3,4,5,\"nonsense\"]]",
                       "[[1,2,3,4,5],]", "[[1.,2,3,4,5]]", "[[1e,2,3,4,5]]", "{\"a\":1}"]
        for text in damaged {
            var read: [StoredFix] = []
            let error = #expect(throws: StoreError.self, "\(text)") {
                try Array(text.utf8).withUnsafeBufferPointer { (buffer) throws(StoreError) in
                    try FixChunkCoding.decode(buffer, run: 1, firstSequence: 1, count: 1, base: 0, into: &read)
                }
            }
            #expect(error?.kind == .corrupt, "\(text): \(String(describing: error))")
        }
        // The count column must agree with the text.
        var read: [StoredFix] = []
        #expect(throws: StoreError.self) {
            try Array("[[1,2,3,4,5]]".utf8).withUnsafeBufferPointer { (buffer) throws(StoreError) in
                try FixChunkCoding.decode(buffer, run: 1, firstSequence: 1, count: 2, base: 0, into: &read)
            }
        }
    }

    @Test func jsonSpacingIsAccepted() throws {
        // What SQLite's json() or a hand edit in the shell may leave.
        let fields = try FixChunkCoding.decodeFields(Array(" [ [ 1 , 2 , 3 , 4 , 5 , \"jump\" ] , [1,2,3,[4],5,null] ] ".utf8),
                                                     base: 100)
        #expect(fields.map(\.timestamp) == [104, 4])
        #expect(fields.map(\.rejection) == ["jump", nil])
    }
}
