import Wire

/// libFuzzer entry: a `LineFramer` fed by appends and `nextLine()` calls in any interleaving gives the lines
/// a plain split of the whole stream gives, in order, with each over-long line reported (at least once per
/// run of them, never more often than there are such lines).
///
/// The input is a program: byte 0 picks the maximum line length (1...32, so long lines are common); then each
/// byte is an operation: `op % 4` = 0 or 1 appends the next `op >> 2` bytes (as a buffer pointer, an array
/// or a slice), 2 takes one line, 3 takes lines until nil. At the end, lines are drained and `finish()` called.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLineFramer(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = UnsafeBufferPointer(start: data, count: count)
    guard let first = input.first else { return 0 }
    let maximum = 1 + Int(first % 32)
    var framer = LineFramer(maximumLineLength: maximum)
    var stream: [UInt8] = []
    var output: [FramedLine] = []
    var index = 1
    var appends = 0
    while index < input.count {
        let op = input[index]
        index += 1
        switch op % 4 {
        case 0, 1:
            let end = min(input.count, index + Int(op >> 2))
            let chunk = Array(input[index..<end])
            index = end
            stream += chunk
            switch appends % 3 {
            case 0: chunk.withUnsafeBytes { framer.append($0) }
            case 1: framer.append(chunk)
            default: framer.append(([0x2A] + chunk + [0x2A])[1..<chunk.count + 1])  // a slice not starting at 0
            }
            appends += 1
        case 2:
            if let line = framer.nextLine() { output.append(copied(line)) }
        default:
            while let line = framer.nextLine() { output.append(copied(line)) }
        }
    }
    while let line = framer.nextLine() { output.append(copied(line)) }
    if let last = framer.finish() { output.append(copied(last)) }
    precondition(framer.bufferedByteCount == 0, "finish() left bytes behind")
    check(output, against: expectedLines(of: stream, maximum: maximum), maximum: maximum)
    return 0
}

/// A line as an array (a slice shares the framer's storage).
private func copied(_ line: FramedLine) -> FramedLine {
    if case .line(let bytes) = line { return .line(ArraySlice(Array(bytes))) }
    return line
}

/// The reference: split on `\n`, drop one trailing `\r`, over-long lines become `.tooLong`; an unterminated
/// non-empty tail is a last line.
private func expectedLines(of stream: [UInt8], maximum: Int) -> [FramedLine] {
    var lines: [FramedLine] = []
    var pieces = stream.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
    if pieces.last?.isEmpty == true { pieces.removeLast() }
    for piece in pieces {
        var line = piece
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        lines.append(line.count > maximum ? .tooLong : .line(ArraySlice(Array(line))))
    }
    return lines
}

/// Same lines in the same order; between two lines, as many `.tooLong` reports as over-long lines, or
/// fewer but at least one.
private func check(_ output: [FramedLine], against expected: [FramedLine], maximum: Int) {
    func groups(_ lines: [FramedLine]) -> (lines: [ArraySlice<UInt8>], reports: [Int]) {
        var kept: [ArraySlice<UInt8>] = []
        var reports = [0]
        for line in lines {
            switch line {
            case .line(let bytes):
                kept.append(bytes)
                reports.append(0)
            case .tooLong:
                reports[reports.count - 1] += 1
            }
        }
        return (kept, reports)
    }
    let got = groups(output)
    let want = groups(expected)
    for line in got.lines {
        precondition(line.count <= maximum, "a line of \(line.count) bytes over the maximum \(maximum)")
        precondition(!line.contains(UInt8(ascii: "\n")), "a line with a newline inside")
    }
    precondition(got.lines == want.lines, "lines differ: got \(got.lines.map(Array.init)), want \(want.lines.map(Array.init))")
    for (reported, overLong) in zip(got.reports, want.reports) {
        precondition(reported <= overLong && (overLong == 0 || reported >= 1),
                     "\(reported) too-long reports for \(overLong) over-long lines")
    }
}
