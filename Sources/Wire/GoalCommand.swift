/// A run's goal as `goal:` gives it: the distance to cover, optionally the time to cover it in and how far off
/// that pace a runner may be before coaches are alerted.
public struct GoalCommand: Sendable, Hashable {
    /// Metres to cover (e.g. 42195), within ``GoalCommand/distanceRange``.
    public var distance: Double
    /// Seconds to cover them in, if the runner has a target time (within ``GoalCommand/targetRange``).
    public var targetTime: Double?
    /// How far off the target pace, in percent, is off pace (``GoalCommand/defaultMargin`` when not given).
    public var marginPercent: Double?

    /// Metres a goal may have.
    public static let distanceRange: ClosedRange<Double> = 100...1_000_000
    /// Seconds a target time may have (up to a week).
    public static let targetRange: ClosedRange<Double> = 60...604_800
    /// Percents a margin may have.
    public static let marginRange: ClosedRange<Double> = 1...50
    /// The margin when none is given, in percent.
    public static let defaultMargin: Double = 5

    /// Creates a goal.
    public init(distance: Double, targetTime: Double? = nil, marginPercent: Double? = nil) {
        self.distance = distance
        self.targetTime = targetTime
        self.marginPercent = marginPercent
    }

    /// The arguments as written on the wire: `DISTANCE [TARGET [MARGIN]]`.
    public var argumentText: String {
        var text = NumberFormat.plain(distance)
        if let targetTime { text += " " + NumberFormat.plain(targetTime) }
        if let marginPercent { text += " " + NumberFormat.plain(marginPercent) }
        return text
    }
}

extension CommandParser {
    /// `goal:DISTANCE [TARGET [MARGIN]]` or `goal:off`.
    static func goal(_ bytes: UnsafeBufferPointer<UInt8>, _ args: Range<Int>) throws(WireError) -> Command {
        if text(bytes, args) == "off" { return .goal(nil) }
        let tokens = words(bytes, args)
        guard (1...3).contains(tokens.count) else {
            throw WireError(.badArgument, "goal: takes DISTANCE_M [TARGET_SECONDS [MARGIN_PERCENT]] or off")
        }
        let distance = try number(bytes, tokens[0], "goal distance")
        guard GoalCommand.distanceRange.contains(distance) else {
            throw WireError(.badArgument, "goal: distance is 100-1000000 metres")
        }
        var goal = GoalCommand(distance: distance)
        if tokens.count >= 2 {
            let target = try number(bytes, tokens[1], "goal target time")
            guard GoalCommand.targetRange.contains(target) else {
                throw WireError(.badArgument, "goal: target time is 60-604800 seconds")
            }
            goal.targetTime = target
        }
        if tokens.count == 3 {
            let margin = try number(bytes, tokens[2], "goal margin")
            guard GoalCommand.marginRange.contains(margin) else {
                throw WireError(.badArgument, "goal: margin is 1-50 percent")
            }
            goal.marginPercent = margin
        }
        return .goal(goal)
    }

    /// `leaders:` or `leaders:GOAL_M`.
    static func leaders(_ bytes: UnsafeBufferPointer<UInt8>, _ args: Range<Int>) throws(WireError) -> Command {
        guard !args.isEmpty else { return .leaders(goal: nil) }
        let prefix = Array("course=".utf8)
        if args.count >= prefix.count, zip(bytes[args.lowerBound..<(args.lowerBound + prefix.count)], prefix).allSatisfy({ $0 == $1 }) {
            guard args.count > prefix.count else { throw WireError(.badName, "leaders: course= needs a course name") }
            return .courseLeaders(try name(bytes, (args.lowerBound + prefix.count)..<args.upperBound, word: "leaders"))
        }
        let distance = try number(bytes, args, "leaders: goal distance")
        guard GoalCommand.distanceRange.contains(distance) else {
            throw WireError(.badArgument, "leaders: goal distance is 100-1000000 metres")
        }
        return .leaders(goal: distance)
    }

    /// `coach:NAME [TOKEN] [every=METRES]`, `coach:* [every=METRES]`.
    static func coach(_ bytes: UnsafeBufferPointer<UInt8>, _ args: Range<Int>) throws(WireError) -> Command {
        var tokens = words(bytes, args)
        var every: Double?
        let prefix = Array("every=".utf8)
        if tokens.count >= 2, let option = tokens.last, option.count > prefix.count,
           zip(bytes[option.lowerBound..<(option.lowerBound + prefix.count)], prefix).allSatisfy({ $0 == $1 }) {
            let value = try number(bytes, (option.lowerBound + prefix.count)..<option.upperBound, "every")
            guard Command.Limits.checkpointInterval.contains(value) else { throw WireError(.badArgument, "coach: every= is 100-100000 metres") }
            every = value
            tokens.removeLast()
        }
        try refuseOptions(bytes, tokens, word: "coach", known: ["every"], usage: "coach:NAME [TOKEN] [every=METRES]")
        let (target, token) = try targetAndToken(bytes, tokens, args, word: "coach")
        return .coach(target, token: token, every: every)
    }

    /// `watch:NAME [TOKEN]`, `watch:*`.
    static func watch(_ bytes: UnsafeBufferPointer<UInt8>, _ args: Range<Int>) throws(WireError) -> Command {
        let tokens = words(bytes, args)
        try refuseOptions(bytes, tokens, word: "watch", usage: "watch:NAME [TOKEN]")
        let (target, token) = try targetAndToken(bytes, tokens, args, word: "watch")
        return .watch(target, token: token)
    }

    /// An option (`KEY=VALUE`) after the target that the command does not take, or not there: `bad_argument`
    /// naming it, not `bad_name` (a name never has `=`, but the option is what is wrong).
    private static func refuseOptions(_ bytes: UnsafeBufferPointer<UInt8>, _ tokens: [Range<Int>], word: String,
                                      known: [String] = [], usage: String) throws(WireError) {
        for option in tokens.dropFirst() {
            guard let equals = firstIndex(of: UInt8(ascii: "="), in: bytes, option) else { continue }
            let key = text(bytes, option.lowerBound..<equals)
            let shown = key.count > 20 ? String(key.prefix(20)) + "…" : key
            let problem = known.contains(key) ? "\(key)= goes last, with a number" : "unknown option \(shown)="
            throw WireError(.badArgument, "\(word): \(problem) (\(usage))")
        }
    }

    /// A target and, for a runner, an optional share token after it.
    private static func targetAndToken(_ bytes: UnsafeBufferPointer<UInt8>, _ tokens: [Range<Int>], _ args: Range<Int>,
                                       word: String) throws(WireError) -> (WatchTarget, String?) {
        // A share token is what `share:` issues, 32 hex digits; anything else after a space is part of a name
        // (and refused as one, as before share links).
        guard tokens.count == 2, isShareToken(bytes, tokens[1]) else {
            return (try target(bytes, tokens.count == 1 ? tokens[0] : args, word: word), nil)
        }
        let target = try target(bytes, tokens[0], word: word)
        guard case .runner = target else { throw WireError(.badArgument, "\(word):* takes no share token") }
        return (target, text(bytes, tokens[1]))
    }

    /// 32 hex digits.
    static func isShareToken(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        range.count == 32 && range.allSatisfy { index in
            let byte = bytes[index]
            return (byte &- 48) < 10 || ((byte | 0x20) &- 97) < 6
        }
    }


    /// `replay:RUN_ID [SPEED]` or `replay:off`.
    static func replay(_ bytes: UnsafeBufferPointer<UInt8>, _ args: Range<Int>) throws(WireError) -> Command {
        if text(bytes, args) == "off" { return .replay(runID: nil, speed: 1) }
        let tokens = words(bytes, args)
        guard (1...2).contains(tokens.count) else { throw WireError(.badArgument, "replay: takes RUN_ID [SPEED] or off") }
        let id = try runID(bytes, tokens[0])
        guard tokens.count == 2 else { return .replay(runID: id, speed: 1) }
        let speed = try number(bytes, tokens[1], "replay: SPEED")
        guard Command.Limits.replaySpeed.contains(speed) else { throw WireError(.badArgument, "replay: SPEED is 1-100") }
        return .replay(runID: id, speed: speed)
    }

    /// `private:on|off`, `privacy:METRES`, `share:[SECONDS]`, `unshare:TOKEN|*`.
    static func privacy(_ word: String, _ bytes: UnsafeBufferPointer<UInt8>, _ args: Range<Int>) throws(WireError) -> Command {
        switch word {
        case "private":
            switch text(bytes, args) {
            case "on": return .setPrivate(true)
            case "off": return .setPrivate(false)
            default: throw WireError(.badArgument, "private: takes on or off")
            }
        case "privacy":
            let metres = try number(bytes, args, "privacy: METRES")
            guard Command.Limits.privacyZone.contains(metres) else { throw WireError(.badArgument, "privacy: is 0-1000 metres") }
            return .privacyZone(metres)
        case "share":
            guard !args.isEmpty else { return .share(seconds: nil) }
            let seconds = try number(bytes, args, "share: SECONDS")
            guard Command.Limits.shareSeconds.contains(seconds) else {
                throw WireError(.badArgument, "share: lasts 60-604800 seconds (default 86400)")
            }
            return .share(seconds: seconds)
        default:
            if args.count == 1 && bytes[args.lowerBound] == UInt8(ascii: "*") { return .unshare(token: nil) }
            guard !args.isEmpty, isValidKey(bytes, args) else {
                throw WireError(.badKey, "unshare: takes a share token (letters and digits) or *")
            }
            return .unshare(token: text(bytes, args))
        }
    }
}
