/// A libFuzzer-ready check of the parser. A fuzz target only needs
///
/// ```swift
/// @_cdecl("LLVMFuzzerTestOneInput")
/// public func fuzzHTTP(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
///     HTTPRequestParser.fuzz(UnsafeRawBufferPointer(start: data, count: count))
///     return 0
/// }
/// ```
/// built with `-sanitize=fuzzer,address` and run over `Tests/HTTPTests/Corpus/`.
extension HTTPRequestParser {
    /// What a parser made of some input: the requests in order, then the error or nil if it is waiting.
    public struct Outcome: Sendable, Hashable {
        /// Requests completed, in order.
        public var requests: [HTTPRequest]
        /// The error that stopped the parser, if one did.
        public var error: HTTPError?
        /// Whether bytes of an incomplete request are held.
        public var hasPartialRequest: Bool
    }

    /// Parses `input` delivered in pieces of `pieceSize` bytes (the whole input at once when nil),
    /// draining requests after every piece as a server does.
    public static func outcome(of input: UnsafeRawBufferPointer, pieceSize: Int? = nil,
                               limits: HTTPLimits = .standard) -> Outcome {
        var parser = HTTPRequestParser(limits: limits)
        var requests: [HTTPRequest] = []
        let step = max(1, pieceSize ?? input.count)
        var offset = 0
        repeat {
            let end = min(input.count, offset + step)
            parser.append(UnsafeRawBufferPointer(rebasing: input[offset..<end]))
            offset = end
            do {
                while let request = try parser.nextRequest() { requests.append(request) }
            } catch {
                return Outcome(requests: requests, error: error, hasPartialRequest: false)
            }
        } while offset < input.count
        return Outcome(requests: requests, error: nil, hasPartialRequest: parser.hasPartialRequest)
    }

    /// Traps (as a fuzzer wants) unless the input reads the same whole, byte by byte and in uneven
    /// pieces, every request respects the limits, and every error maps to a 4xx/5xx status.
    /// Returns the number of requests read.
    @discardableResult
    public static func fuzz(_ data: UnsafeRawBufferPointer) -> Int {
        // One path with a larger body limit, as the server gives the phone apps' batches.
        let limits = HTTPLimits(bodyAllowances: ["/osmand": 65_536])
        let whole = outcome(of: data, limits: limits)
        let bytewise = outcome(of: data, pieceSize: 1, limits: limits)
        let uneven = outcome(of: data, pieceSize: 7, limits: limits)
        precondition(whole == bytewise, "byte-by-byte input read differently")
        precondition(whole == uneven, "input in 7-byte pieces read differently")
        for request in whole.requests {
            precondition(request.body.count <= limits.maximumBodyBytes(forPath: request.path), "body over the limit")
            precondition(request.headers.count <= limits.maximumHeaderCount, "too many fields")
            precondition(request.version == .http10 || request.host != nil, "HTTP/1.1 without a host")
            _ = HTTPResponse.text(.ok, request.path).encoded(keepAlive: request.keepAlive)
        }
        if let error = whole.error {
            precondition((400...599).contains(error.status.code), "an error with a non-error status")
            _ = HTTPResponse.error(error).encoded(keepAlive: false)
        }
        return whole.requests.count
    }
}
