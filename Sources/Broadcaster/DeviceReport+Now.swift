import HTTP
// Temporary until the parser takes the time of receipt (issue 25).
extension DeviceReport {
    static func osmAnd(_ request: HTTP.HTTPRequest, now: Double) throws(Problem) -> DeviceReport { try osmAnd(request) }
    static func ownTracks(_ request: HTTP.HTTPRequest, now: Double) throws(Problem) -> DeviceReport { try ownTracks(request) }
}
