import Wire

extension WebAPI {
    /// `GET /api/overview`: `{"live":[{"runner","run","pos","course","pace"}…],"ended":[end…]}`, live runners in
    /// the leaderboard's order (the page keeps it up to date from `rank:` events).
    static func overviewJSON(_ overview: Hub.Overview) -> [UInt8] {
        var json = Array(#"{"live":["#.utf8)
        for (index, runner) in overview.live.enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            json += Array(#"{"runner":"#.utf8)
            JSONSyntax.appendString(runner.name, to: &json)
            json += Array(#","run":\#(runner.runID),"pos":\#(runner.position.map(String.init) ?? "null"),"course":"#.utf8)
            if let course = runner.course {
                JSONSyntax.appendString(course, to: &json)
            } else {
                json += Array("null".utf8)
            }
            json += Array(#","pace":"#.utf8)
            json += runner.paceLine.map(WebAPI.eventJSON) ?? Array("null".utf8)
            json.append(UInt8(ascii: "}"))
        }
        json += Array(#"],"ended":"#.utf8)
        json += TrackSnapshot.array(overview.ended)
        json.append(UInt8(ascii: "}"))
        return json
    }
}
