extension BadgeHistory {
    /// Speed ratio to the reference for silver.
    public static let silverRatio = 1.05
    /// Speed ratio to the reference for gold.
    public static let goldRatio = 1.10

    /// Records that a run reached `badge` at `speed` m/s (badge distance / elapsed at the crossing)
    /// at unix time `timestamp`, and returns the tiers won, in order.
    ///
    /// - The first run ever to reach a badge earns it (`earned`); its speed becomes the reference.
    ///   That first run does not also get `best`: earning is the news.
    /// - A later run at ≥ 1.05 × the reference wins silver, at ≥ 1.10 × gold, each once. A run fast enough
    ///   for gold while silver is still missing wins both, silver first.
    /// - A later run strictly faster than every earlier run at this badge wins `best` (after any silver/gold).
    /// - Earth, at 0 m, has no meaningful speed (0): it is earned once, at the start of the first run,
    ///   and never wins silver, gold or best.
    public mutating func recordCheckpoint(_ badge: Badge, speed: Double, at timestamp: Double) -> [BadgeTier] {
        let speed = speed.isFinite ? max(speed, 0) : 0
        guard var record = records[badge.id] else {
            records[badge.id] = Record(earnedAt: timestamp, referenceSpeed: speed, bestSpeed: speed)
            return [.earned]
        }
        guard record.referenceSpeed > 0 else { return [] }  // Earth, or a corrupt zero reference
        var tiers: [BadgeTier] = []
        if record.silverAt == nil, speed >= record.referenceSpeed * Self.silverRatio {
            record.silverAt = timestamp
            tiers.append(.silver)
        }
        if record.goldAt == nil, speed >= record.referenceSpeed * Self.goldRatio {
            record.goldAt = timestamp
            tiers.append(.gold)
        }
        if speed > record.bestSpeed {
            record.bestSpeed = speed
            tiers.append(.best)
        }
        records[badge.id] = record
        return tiers
    }
}
