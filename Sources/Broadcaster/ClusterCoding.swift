import LiveCore
import ClusterBus
import Foundation
import RunCore
import RunStore

/// How a ``RelayMessage`` travels on the cluster bus: a few short fields, the event's line as it is.
///
/// - an event: `m=e`, `r` runner, `l` line, `a` audience (`s` spectators, `e` everyone, `c` coaches), `o` its
///   owner's number (its SSE id everywhere, and what tells an event read twice), `k` kind (`started`,
///   `pace`, `badge`, `cheer`, `ended`, `other`) with its figures in `d` (space-separated numbers) and
///   `h` (a start's badge history as JSON, or a pace's rejection counts as `reason=count` words), `f` a phone
///   alert's whole line (kind `other`, so a node without it delivers the line as it is), `x=1` for a
///   recovered run's catch-up (mirrors only, nobody hears it again) and `x=2` for a snapshot after a gap on
///   the bus (mirrors, and followers as late joiners; a node before snapshots takes it as a catch-up);
/// - a runner claimed or its history changed: `m=r`, `r`, `k` key hash, `h` history JSON;
/// - a device token issued: `m=d`, `r` runner, `h` the token's hash; tokens revoked: `m=u`, `h` hashes.
///
/// Anything else (connection moves, counters) stays inside a node.
enum ClusterCoding {
    /// The runner (its stream) and the fields of a piece of news on the bus.
    static func fields(of message: HubNews) -> (runner: String, fields: [(String, [UInt8])]) {
        switch message {
        case .event(let event):
            var fields: [(String, [UInt8])] = [("m", bytes("e")), ("r", bytes(event.runner)), ("l", event.line),
                                               ("a", bytes(audienceCode(event.audience))), ("o", bytes(String(event.sequence)))]
            if event.isCatchUp { fields.append(("x", bytes(event.isSnapshot ? "2" : "1"))) }
            switch event.kind {
            case .started(let runID, let started, let history):
                fields += [("k", bytes("started")), ("d", bytes("\(runID) \(started)")), ("h", json(history))]
            case .pace(let distance, let elapsed, let moving, let rejections, let goal, let course):
                let figures = goal.map { "\(distance) \(elapsed) \(moving) \($0)" } ?? "\(distance) \(elapsed) \(moving)"
                fields += [("k", bytes("pace")), ("d", bytes(figures))]
                if let course { fields.append(("c", bytes(course))) }
                // Every pace of a noisy run carries these: plain `reason=count` words, no JSON coder per event.
                if !rejections.isEmpty {
                    fields.append(("h", bytes(rejections.map { "\($0.key.rawValue)=\($0.value)" }.joined(separator: " "))))
                }
            case .badge: fields.append(("k", bytes("badge")))
            case .point: fields.append(("k", bytes("point")))
            case .cheer: fields.append(("k", bytes("cheer")))
            case .ended(let runID): fields += [("k", bytes("ended")), ("d", bytes("\(runID)"))]
            case .other: fields.append(("k", bytes("other")))
            case .deviceAlert(let fullLine): fields += [("k", bytes("other")), ("f", fullLine)]
            }
            return (event.runner, fields)
        case .runner(let name, let keyHash, let history, let privacy):
            return (name, [("m", bytes("r")), ("r", bytes(name)), ("k", bytes(keyHash)), ("h", json(history)),
                           ("p", bytes("\(privacy.isPrivate ? 1 : 0) \(privacy.zone)"))])
        case .shares(let runner, let added, let removed):
            // On the runner's stream: ordered with its events, so a revocation reaches a node before what follows.
            var fields: [(String, [UInt8])] = [("m", bytes("s")), ("r", bytes(runner)),
                                               ("u", bytes(removed.joined(separator: " ")))]
            if let added { fields.append(("h", bytes("\(added.hash) \(added.created) \(added.expires)"))) }
            return (runner, fields)
        case .deviceAdded(let token):
            // `c` and `b` (when, and the label) are new: a node of the version before them reads the rest.
            var fields: [(String, [UInt8])] = [("m", bytes("d")), ("r", bytes(token.runner)), ("h", bytes(token.hash)),
                                               ("c", bytes(String(token.created)))]
            if let label = token.label { fields.append(("b", bytes(label))) }
            return (token.runner, fields)
        case .devicesRemoved(let hashes):
            // Revocations name no runner: they go on a stream of their own (also added to the all-runs one).
            return (revokedDevices, [("m", bytes("u")), ("r", bytes(revokedDevices)), ("h", bytes(hashes.joined(separator: " ")))])
        }
    }

    /// The message an entry carries, numbered by its stream id; nil for an entry that is not one (never from a
    /// node of this version: a newer node's kinds are skipped, not misread).
    static func message(of entry: BusEntry) -> HubNews? {
        guard let type = entry["m"].map(text), let runner = entry["r"].map(text), !runner.isEmpty else { return nil }
        switch type {
        case "e":
            guard let line = entry["l"], let audience = entry["a"].map(text), let kindName = entry["k"].map(text)
            else { return nil }
            let numbers = (entry["d"].map(text) ?? "").split(separator: " ").compactMap { Double($0) }
            let kind: RelayedEvent.Kind
            switch kindName {
            case "started":
                guard numbers.count == 2, let history = entry["h"].flatMap({ decode(BadgeHistory.self, $0) })
                else { return nil }
                kind = .started(runID: Int64(numbers[0]), started: numbers[1], startHistory: history)
            case "pace":
                guard numbers.count == 3 || numbers.count == 4 else { return nil }
                var rejections: [FixRejection: Int] = [:]
                for word in (entry["h"].map(text) ?? "").split(separator: " ") {
                    let parts = word.split(separator: "=")
                    if parts.count == 2, let reason = FixRejection(rawValue: String(parts[0])), let count = Int(parts[1]) {
                        rejections[reason] = count
                    }
                }
                kind = .pace(distance: numbers[0], elapsed: numbers[1], movingTime: numbers[2], rejections: rejections,
                             goal: numbers.count == 4 ? numbers[3] : nil, course: entry["c"].map(text))
            case "badge": kind = .badge
            case "point": kind = .point
            case "cheer": kind = .cheer
            case "ended":
                guard numbers.count == 1 else { return nil }
                kind = .ended(runID: Int64(numbers[0]))
            case "other": kind = entry["f"].map { .deviceAlert(fullLine: $0) } ?? .other
            default: return nil
            }
            guard let audience = Self.audience(coded: audience) else { return nil }
            // The owner's number; from a node before it sent one, the stream id's.
            let number = entry["o"].map(text).flatMap { UInt64($0) } ?? sequence(of: entry.id)
            var event = RelayedEvent(runner: runner, line: line, audience: audience, sequence: number,
                                     kind: kind, isCatchUp: entry["x"] != nil)
            event.isSnapshot = entry["x"] == bytes("2")
            return .event(event)
        case "d":
            guard let hash = entry["h"].map(text), !hash.isEmpty else { return nil }
            // A node of the version before labels sends no `c`: the token is as new as the message.
            let created = entry["c"].map(text).flatMap(Double.init) ?? Double(entry.id.milliseconds) / 1000
            return .deviceAdded(DeviceToken(hash: hash, runner: runner, created: created, label: entry["b"].map(text)))
        case "u":
            return .devicesRemoved(hashes: (entry["h"].map(text) ?? "").split(separator: " ").map(String.init))
        case "r":
            guard let keyHash = entry["k"].map(text), let history = entry["h"].flatMap({ decode(BadgeHistory.self, $0) })
            else { return nil }
            // A node of the version before privacy sends no `p`: public.
            let privacy = (entry["p"].map(text) ?? "0 0").split(separator: " ")
            return .runner(name: runner, keyHash: keyHash, history: history,
                           privacy: RunnerPrivacy(isPrivate: privacy.first == "1",
                                                  zone: privacy.count > 1 ? Double(privacy[1]) ?? 0 : 0))
        case "s":
            let removed = (entry["u"].map(text) ?? "").split(separator: " ").map(String.init)
            var added: ShareToken?
            let parts = (entry["h"].map(text) ?? "").split(separator: " ")
            if parts.count == 3, let created = Double(parts[1]), let expires = Double(parts[2]) {
                added = ShareToken(hash: String(parts[0]), runner: runner, created: created, expires: expires)
            }
            return .shares(runner: runner, added: added, removed: removed)
        default:
            return nil
        }
    }

    /// An audience on the bus: `s` spectators, `e` everyone, `c` coaches.
    static func audienceCode(_ audience: Hub.Audience) -> String {
        switch audience {
        case .spectators: return "s"
        case .everyone: return "e"
        case .coaches: return "c"
        }
    }

    /// The audience of a bus code; nil for one this version does not know.
    static func audience(coded code: String) -> Hub.Audience? {
        switch code {
        case "s": return .spectators
        case "e": return .everyone
        case "c": return .coaches
        default: return nil
        }
    }

    /// The runner revocations travel as (they name none): a name no runner can have (`#` is not allowed in a
    /// name), so its partition is a fixed one and no runner's news is mistaken for it.
    static let revokedDevices = "#devices"

    /// An event's number from its stream id: the same on every node that reads it.
    static func sequence(of id: StreamID) -> UInt64 {
        id.milliseconds &* 1000 &+ min(id.sequence, 999)
    }

    private static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
    private static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    private static func json(_ value: some Encodable) -> [UInt8] {
        (try? Array(JSONEncoder().encode(value))) ?? Array("{}".utf8)
    }

    private static func decode<Value: Decodable>(_ type: Value.Type, _ bytes: [UInt8]) -> Value? {
        try? JSONDecoder().decode(type, from: Data(bytes))
    }
}
