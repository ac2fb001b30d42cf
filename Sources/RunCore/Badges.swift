import Foundation

/// The 33 badges, loaded once from the package's `badges.json` resource.
public enum Badges {
    /// All badges in order of distance, Earth first.
    public static let all: [Badge] = loadBadges()

    /// The badges by id, built once.
    private static let byID: [String: Badge] = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0) })

    /// The first badge strictly farther than `distance`, nil past the last.
    public static func next(for distance: Double) -> Badge? {
        let index = firstIndex(fartherThan: distance)
        return index < all.count ? all[index] : nil
    }

    /// The last badge strictly below `distance` (the first badge when none).
    public static func best(for distance: Double) -> Badge {
        var low = 0, high = all.count  // first index whose distance is >= distance
        while low < high {
            let mid = (low + high) / 2
            if all[mid].distance < distance { low = mid + 1 } else { high = mid }
        }
        return low == 0 ? all[0] : all[low - 1]
    }

    /// The badge with this id.
    public static func badge(id: String) -> Badge? { byID[id] }

    /// Index of the first badge strictly farther than `distance` (`all.count` when none): a binary search,
    /// because the tracker asks on every fix.
    static func firstIndex(fartherThan distance: Double) -> Int {
        var low = 0, high = all.count
        while low < high {
            let mid = (low + high) / 2
            if all[mid].distance <= distance { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Parses the bundled resource. The file ships with the package, so a failure is a build defect.
    private static func loadBadges() -> [Badge] {
        guard let url = Bundle.module.url(forResource: "badges", withExtension: "json"),
              let data = try? Data(contentsOf: url),
              let badges = try? JSONDecoder().decode([Badge].self, from: data)
        else { preconditionFailure("RunCore: the bundled badges.json is missing or malformed") }
        return badges.sorted { $0.distance < $1.distance }
    }
}
