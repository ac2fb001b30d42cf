/// Runs `body` over the UTF-8 bytes of `text`, keeping the typed error (the standard library's
/// `withUTF8` only rethrows untyped errors).
func withUTF8Bytes<T>(of text: String, _ body: (UnsafeBufferPointer<UInt8>) throws(WireError) -> T) throws(WireError) -> T {
    var text = text
    let result = text.withUTF8 { buffer in Result { () throws(WireError) -> T in try body(buffer) } }
    return try result.get()
}
