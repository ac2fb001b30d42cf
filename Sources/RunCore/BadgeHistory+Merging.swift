extension BadgeHistory.Record {
    /// This record combined with another record of the same badge, as if both had been kept in one history:
    /// the earlier earning (and its reference speed), the earlier silver and gold, the faster best.
    ///
    /// Merging is commutative and idempotent, so two writers that saved their own view of a runner (a live
    /// server and an import in another process) end with the same record whichever saved last.
    public func merged(with other: Self) -> Self {
        let first = other.earnedAt < earnedAt ? other : self
        func earlier(_ a: Double?, _ b: Double?) -> Double? {
            switch (a, b) {
            case (let a?, let b?): min(a, b)
            default: a ?? b
            }
        }
        return Self(earnedAt: first.earnedAt, referenceSpeed: first.referenceSpeed,
                    silverAt: earlier(silverAt, other.silverAt), goldAt: earlier(goldAt, other.goldAt),
                    bestSpeed: max(bestSpeed, other.bestSpeed))
    }
}

extension BadgeHistory {
    /// This history with every record of `other` merged in (see ``Record/merged(with:)``).
    public func merged(with other: Self) -> Self {
        var result = self
        for (badge, record) in other.records {
            result.records[badge] = result.records[badge].map { $0.merged(with: record) } ?? record
        }
        return result
    }
}
