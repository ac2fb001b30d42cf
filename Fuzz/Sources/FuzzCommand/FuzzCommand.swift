import Wire

/// libFuzzer entry: `Command.parse` on any bytes either throws a `WireError` or returns a command whose
/// canonical line parses back to the same command (as `Command.line` promises), and the bytes and the
/// text form of a valid UTF-8 line give the same answer.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCommand(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: count)
    let parsed = Result { () throws(WireError) -> Command in try Command.parse(bytes) }
    if let text = String(validating: bytes, as: UTF8.self) {
        let fromText = Result { () throws(WireError) -> Command in try Command.parse(text) }
        precondition(fromText.success == parsed.success, "the text and the bytes of a line parse differently")
    }
    guard case .success(let command) = parsed else { return 0 }
    let line = command.line
    let reparsed: Command
    do { reparsed = try Command.parse(line) } catch {
        preconditionFailure("the canonical line \(line.debugDescription) does not parse: \(error)")
    }
    precondition(reparsed == command, "the canonical line \(line.debugDescription) reads as \(reparsed)")
    var encoded: [UInt8] = []
    command.append(to: &encoded)
    precondition(encoded == Array((line + "\n").utf8), "append(to:) differs from line")
    return 0
}

extension Result {
    /// The value, or nil for a failure.
    var success: Success? {
        if case .success(let value) = self { return value }
        return nil
    }
}
