/// A runner's badge record across runs: what was earned, the reference speeds, and bests.
/// A value type the store saves and loads (Codable), so history survives restarts.
public struct BadgeHistory: Sendable, Hashable, Codable {
    /// The record of one badge.
    public struct Record: Sendable, Hashable, Codable {
        /// Unix time the badge was first earned.
        public var earnedAt: Double
        /// The checkpoint speed (m/s) of the run that first earned it: the reference for silver and gold.
        public var referenceSpeed: Double
        /// Unix time silver was won, if it was.
        public var silverAt: Double?
        /// Unix time gold was won, if it was.
        public var goldAt: Double?
        /// The fastest checkpoint speed (m/s) of any run at this badge.
        public var bestSpeed: Double

        /// Creates a record.
        public init(earnedAt: Double, referenceSpeed: Double, silverAt: Double? = nil, goldAt: Double? = nil, bestSpeed: Double) {
            self.earnedAt = earnedAt
            self.referenceSpeed = referenceSpeed
            self.silverAt = silverAt
            self.goldAt = goldAt
            self.bestSpeed = bestSpeed
        }
    }

    /// Records by badge id.
    public var records: [String: Record]

    /// An empty history: nothing earned yet.
    public init(records: [String: Record] = [:]) {
        self.records = records
    }
}
