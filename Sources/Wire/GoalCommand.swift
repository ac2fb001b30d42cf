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
        let distance = try number(bytes, args, "leaders: goal distance")
        guard GoalCommand.distanceRange.contains(distance) else {
            throw WireError(.badArgument, "leaders: goal distance is 100-1000000 metres")
        }
        return .leaders(goal: distance)
    }

    /// Metres a checkpoint interval (`coach:NAME every=M`) may have.
    static let checkpointRange: ClosedRange<Double> = 100...100_000

    /// `coach:NAME`, `coach:*`, optionally followed by `every=METRES`.
    static func coach(_ bytes: UnsafeBufferPointer<UInt8>, _ args: Range<Int>) throws(WireError) -> Command {
        let tokens = words(bytes, args)
        guard tokens.count == 2 else { return .coach(try target(bytes, args, word: "coach"), every: nil) }
        let option = tokens[1]
        let prefix = Array("every=".utf8)
        guard option.count > prefix.count,
              zip(bytes[option.lowerBound..<(option.lowerBound + prefix.count)], prefix).allSatisfy({ $0 == $1 }) else {
            // Not an option: a name with a space in it, refused as a name.
            return .coach(try target(bytes, args, word: "coach"), every: nil)
        }
        let every = try number(bytes, (option.lowerBound + prefix.count)..<option.upperBound, "every")
        guard checkpointRange.contains(every) else { throw WireError(.badArgument, "coach: every= is 100-100000 metres") }
        return .coach(try target(bytes, tokens[0], word: "coach"), every: every)
    }
}
