import ClusterBus

/// libFuzzer entry: the cluster bus's RESP2 reader must read any input the same whole, byte by byte and in
/// uneven pieces, keep to its limits, refuse with an unexpected-reply error, and read back what it read when
/// that is written again (``RESPFuzzing/check(_:)`` traps otherwise).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRESPReply(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    RESPFuzzing.check(UnsafeRawBufferPointer(start: data, count: count))
    return 0
}
