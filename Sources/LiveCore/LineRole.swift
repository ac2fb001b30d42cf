/// What an outgoing line is to a reader's queue (``OutputBuffer``): what may be conflated or dropped for a reader
/// that is behind, and which runner's order it must keep.
///
/// Whoever makes the line says it (the hub knows what it broadcasts); the queue never reads it back from the
/// line's text, which an event stream's frame (`id: 7` / `event: end` / `data: {…}`) does not begin with.
package enum LineRole: Equatable, Sendable {
    /// A reply, a note or a frame that is no runner's event: queued in order, never conflated.
    case reply
    /// A runner's position (`pace:`): a reader that is behind needs only the newest.
    case pace(of: String)
    /// A cheer for a runner (`msg:`): the first thing a reader that is behind goes without.
    case cheer(for: String)
    /// Any other event about a runner (`run:`, `badge:`, `end:`, …): the runner's pending position goes out
    /// before it, so a stale position never follows it.
    case event(about: String)

    /// The role of a runner's event line: a position when `droppable`, a cheer for `msg:`, else an event.
    static func of(_ line: [UInt8], about runner: String, droppable: Bool) -> LineRole {
        if droppable { return .pace(of: runner) }
        return isCheer(line) ? .cheer(for: runner) : .event(about: runner)
    }

    /// True for a cheer's line (`msg:`).
    static func isCheer(_ line: [UInt8]) -> Bool {
        line.count > 4 && line[0] == UInt8(ascii: "m") && line[1] == UInt8(ascii: "s") && line[2] == UInt8(ascii: "g")
            && line[3] == UInt8(ascii: ":")
    }

    /// The runner whose order the line keeps (nil for a reply).
    var runner: String? {
        switch self {
        case .reply: nil
        case .pace(let runner), .cheer(let runner), .event(let runner): runner
        }
    }
}
