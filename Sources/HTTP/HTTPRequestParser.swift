/// An incremental HTTP/1.1 request parser: feed it the bytes of one connection as they arrive, take
/// complete requests out one after another (pipelining), and answer its errors with their status.
///
/// Strict by design (RFC 9112 with no leniency that could let two parsers disagree about framing):
/// CRLF line ends only, no obs-fold, no whitespace before a field's colon, one Host on HTTP/1.1, at
/// most one Content-Length and never together with Transfer-Encoding, chunked as the only coding.
/// Every byte is examined once however the input is split, so a client sending one byte at a time
/// costs O(n) in total; the server bounds time with its header timeout (see `hasPartialRequest`).
///
/// ```swift
/// parser.append(bytesFromSocket)
/// while let request = try parser.nextRequest() { respond(to: request) }
/// ```
/// After an error the parser stays failed (rethrowing it): answer `HTTPResponse.error(_:)` and close.
public struct HTTPRequestParser: Sendable {
    /// The limits applied to every request.
    public let limits: HTTPLimits
    /// Received bytes not yet handed out; compacted on `append` so it holds at most one partial request
    /// plus whatever arrived after it.
    var buffer: [UInt8] = []
    /// The first byte of the request being read.
    var requestStart = 0
    /// The next byte to examine.
    var position = 0
    var state = State.head(HeadProgress(lineStart: 0))
    var failure: HTTPError?
    /// Set when a head with `Expect: 100-continue` is waiting for its body, until taken.
    var continueRequested = false
    /// Bytes examined by the scanning loops since creation: the slowloris test checks it stays ≤ bytes fed.
    var examinedByteCount = 0

    enum State: Sendable {
        case head(HeadProgress)
        case fixedBody(RequestHead, bodyStart: Int, length: Int)
        case chunkedBody(RequestHead, ChunkedProgress)
    }

    /// Creates a parser for one connection.
    public init(limits: HTTPLimits = .standard) {
        self.limits = limits
    }

    /// Adds bytes received from the connection (ignored once the parser has failed).
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil, !bytes.isEmpty else { return }
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Adds bytes received from the connection (ignored once the parser has failed).
    public mutating func append(_ bytes: some Collection<UInt8>) {
        guard failure == nil, !bytes.isEmpty else { return }
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// The next complete request, nil when more bytes are needed; throws the request's error (and
    /// keeps throwing it) when the bytes cannot be a valid request.
    public mutating func nextRequest() throws(HTTPError) -> HTTPRequest? {
        if let failure { throw failure }
        do {
            return try step()
        } catch {
            failure = error
            buffer = []
            requestStart = 0
            position = 0
            throw error
        }
    }

    /// Whether part of a request has arrived but not all of it: the server's header (or body) timeout
    /// runs while this is true, its idle keep-alive timeout while it is false.
    public var hasPartialRequest: Bool { buffer.count > requestStart }

    /// Bytes held: a server reading while this exceeds `maximumHeadBytes + largestBodyBytes` should stop
    /// reading until the pending requests are answered, so the buffer stays bounded.
    public var bufferedByteCount: Int { buffer.count - requestStart }

    /// True once when the request being read asked for `Expect: 100-continue` and its body has not
    /// arrived: the server then writes `HTTPResponse.continueHead` so the client sends the body (curl
    /// otherwise waits a second). False again once taken, or once the request is complete.
    public mutating func takeContinueRequest() -> Bool {
        defer { continueRequested = false }
        return continueRequested
    }

    /// Whether the parser has failed and the connection must close.
    public var hasFailed: Bool { failure != nil }

    /// Drops the bytes of requests already handed out, shifting every index of the state machine.
    mutating func compact() {
        let offset = requestStart
        guard offset > 0 else { return }
        if offset == buffer.count {
            buffer.removeAll(keepingCapacity: true)
        } else {
            buffer.removeFirst(offset)
        }
        requestStart = 0
        position -= offset
        switch state {
        case .head(var progress):
            progress.shift(by: offset)
            state = .head(progress)
        case .fixedBody(let head, let bodyStart, let length):
            state = .fixedBody(head, bodyStart: bodyStart - offset, length: length)
        case .chunkedBody(let head, var progress):
            progress.shift(by: offset)
            state = .chunkedBody(head, progress)
        }
    }

    private mutating func step() throws(HTTPError) -> HTTPRequest? {
        while true {
            switch state {
            case .head(var progress):
                guard let head = try scanHead(&progress) else {
                    state = .head(progress)
                    return nil
                }
                continueRequested = head.expectsContinue && (head.isChunked || head.contentLength > 0)
                if head.isChunked {
                    state = .chunkedBody(head, ChunkedProgress(start: position,
                                                               limit: limits.maximumBodyBytes(forPath: head.line.path)))
                } else if head.contentLength > 0 {
                    state = .fixedBody(head, bodyStart: position, length: head.contentLength)
                } else {
                    return finish(head, body: [])
                }
            case .fixedBody(let head, let bodyStart, let length):
                guard buffer.count - bodyStart >= length else { return nil }
                position = bodyStart + length
                examinedByteCount &+= length
                return finish(head, body: Array(buffer[bodyStart..<position]))
            case .chunkedBody(let head, var progress):
                guard try scanChunks(&progress) else {
                    state = .chunkedBody(head, progress)
                    return nil
                }
                return finish(head, body: progress.body)
            }
        }
    }

    private mutating func finish(_ head: RequestHead, body: [UInt8]) -> HTTPRequest {
        continueRequested = false
        requestStart = position
        state = .head(HeadProgress(lineStart: position))
        return head.request(body: body)
    }

    /// Finds the next CRLF-terminated line from `position`, rejecting bare CR and bare LF as they
    /// arrive; returns the line's content range and moves `position` past its LF, or nil (with
    /// `position` at the end of the buffer or at `bound`) when the line is incomplete.
    ///
    /// Scanning never passes `bound` (one byte beyond the caller's limit), so however the input is
    /// split the same byte decides: a bare CR beyond a limit can't win over the limit (the fuzzer's find).
    mutating func nextLine(from lineStart: Int, bound: Int) throws(HTTPError) -> Range<Int>? {
        let end = min(buffer.count, bound)
        while position < end {
            let byte = buffer[position]
            examinedByteCount &+= 1
            let afterCR = position > lineStart && buffer[position - 1] == ASCII.cr
            position += 1
            if byte == ASCII.lf {
                guard afterCR else { throw HTTPError.malformed("a line ends with a bare LF (CRLF required)") }
                return lineStart..<(position - 2)
            }
            if afterCR { throw HTTPError.malformed("bare CR inside a line") }
        }
        return nil
    }
}
