@testable import HTTP

/// Joins lines with CRLF: `wire("GET / HTTP/1.1", "Host: a", "", "")` is a complete head.
func wire(_ lines: String...) -> [UInt8] {
    wire(lines)
}

/// Joins lines with CRLF.
func wire(_ lines: [String]) -> [UInt8] {
    Array(lines.joined(separator: "\r\n").utf8)
}

/// What the parser makes of `bytes` given at once.
func outcome(_ bytes: [UInt8], limits: HTTPLimits = .standard, pieceSize: Int? = nil) -> HTTPRequestParser.Outcome {
    bytes.withUnsafeBytes { HTTPRequestParser.outcome(of: $0, pieceSize: pieceSize, limits: limits) }
}

/// The single request in `bytes`, or nil when there isn't exactly one and no error.
func onlyRequest(_ bytes: [UInt8], limits: HTTPLimits = .standard) -> HTTPRequest? {
    let result = outcome(bytes, limits: limits)
    guard result.error == nil, result.requests.count == 1, !result.hasPartialRequest else { return nil }
    return result.requests[0]
}

/// The status code of the error the parser reports for `bytes`, or nil.
func errorStatus(_ bytes: [UInt8], limits: HTTPLimits = .standard) -> Int? {
    outcome(bytes, limits: limits).error?.status.code
}
