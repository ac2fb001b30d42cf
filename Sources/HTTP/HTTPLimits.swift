/// The hard limits of one HTTP connection's request parser.
///
/// Every limit answers with its own status so a client learns which one it hit: the head (request line
/// and header fields) is bounded by `maximumHeadBytes` and `maximumHeaderCount` (431), the body by
/// `maximumBodyBytes` (413). Time limits (header timeout, idle keep-alive) belong to the server, which
/// asks `HTTPRequestParser.hasPartialRequest` to know which timer applies.
public struct HTTPLimits: Sendable, Hashable {
    /// Bytes from the first byte of the request line up to and including the empty line (431 beyond).
    public var maximumHeadBytes: Int
    /// Header field lines per request, trailers of a chunked body included (431 beyond).
    public var maximumHeaderCount: Int
    /// Bytes of a decoded body (413 beyond), whether framed by Content-Length or chunked.
    public var maximumBodyBytes: Int
    /// Whether `Transfer-Encoding: chunked` request bodies are decoded; when false they get 501.
    public var acceptsChunkedBodies: Bool
    /// Paths (decoded, without the query, matched exactly) whose bodies may be larger than
    /// `maximumBodyBytes`, with their own limit: phone apps upload a queue of positions in one request.
    public var bodyAllowances: [String: Int]

    /// The body limit of a request for `path`.
    public func maximumBodyBytes(forPath path: String) -> Int {
        max(maximumBodyBytes, bodyAllowances[path] ?? 0)
    }

    /// The largest body any request may have (what a connection may have to buffer).
    public var largestBodyBytes: Int { bodyAllowances.values.reduce(maximumBodyBytes, max) }

    /// 8 KiB of head, 100 header lines, 16 KiB of body, chunked bodies accepted.
    public static let standard = HTTPLimits()

    /// Creates limits; the defaults are the server's documented defaults.
    public init(maximumHeadBytes: Int = 8192, maximumHeaderCount: Int = 100, maximumBodyBytes: Int = 16384,
                acceptsChunkedBodies: Bool = true, bodyAllowances: [String: Int] = [:]) {
        self.maximumHeadBytes = maximumHeadBytes
        self.maximumHeaderCount = maximumHeaderCount
        self.maximumBodyBytes = maximumBodyBytes
        self.acceptsChunkedBodies = acceptsChunkedBodies
        self.bodyAllowances = bodyAllowances
    }
}
