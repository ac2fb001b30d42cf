/// The 33 badges, loaded once from the package's `badges.json` resource.
public enum Badges {
    /// All badges in order of distance, Earth first.
    public static let all: [Badge] = { fatalError("TODO RunCore: load badges.json") }()

    /// The first badge strictly farther than `distance`, nil past the last.
    public static func next(for distance: Double) -> Badge? { fatalError("TODO") }

    /// The last badge strictly below `distance` (the first badge when none).
    public static func best(for distance: Double) -> Badge { fatalError("TODO") }

    /// The badge with this id.
    public static func badge(id: String) -> Badge? { fatalError("TODO") }
}
