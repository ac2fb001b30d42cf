import HTTP

/// libFuzzer entry: the HTTP/1.1 request parser must read any input the same whole, byte by byte and in
/// uneven pieces, keep to its limits, and map every error to a 4xx/5xx (``HTTPRequestParser/fuzz(_:)`` traps
/// otherwise).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPRequest(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    HTTPRequestParser.fuzz(UnsafeRawBufferPointer(start: data, count: count))
    return 0
}
