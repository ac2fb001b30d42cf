/// Runs `body` over the UTF-8 bytes of `text`, keeping the typed error (the standard library's
/// `withUTF8` only rethrows untyped errors).
func withUTF8Bytes<T>(of text: String, _ body: (UnsafeBufferPointer<UInt8>) throws(WireError) -> T) throws(WireError) -> T {
    var text = text
    let result = text.withUTF8 { buffer in Result { () throws(WireError) -> T in try body(buffer) } }
    return try result.get()
}

/// Calls `body` with the bytes of `line` in one contiguous buffer: in place when the collection has one, else
/// from a copy. The parsers read buffers; lines come as arrays, slices or other collections.
func withContiguousBytes<T, Bytes: Collection>(
    of line: Bytes, _ body: (UnsafeBufferPointer<UInt8>) throws(WireError) -> T
) throws(WireError) -> T where Bytes.Element == UInt8 {
    let result: Result<T, WireError>? = line.withContiguousStorageIfAvailable { buffer in
        Result { () throws(WireError) -> T in try body(buffer) }
    }
    if let result { return try result.get() }
    let copy = Array(line)
    let copied = copy.withUnsafeBufferPointer { buffer in Result { () throws(WireError) -> T in try body(buffer) } }
    return try copied.get()
}
