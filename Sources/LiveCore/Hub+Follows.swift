/// Who follows which runner by name, and which names are followed at all: what a cluster node reads from the
/// bus (a runner's own stream only where somebody follows that runner; ``followGeneration`` says when to look).
extension Hub {
    /// `id` follows `name` (as a coach or a spectator).
    func addFollower(_ id: ConnectionID, of name: String, coach: Bool) {
        if watchers[name] == nil && coaches[name] == nil { followGeneration &+= 1 }
        if coach {
            coaches[name, default: []].insert(id)
        } else {
            watchers[name, default: []].insert(id)
        }
    }

    /// `id` no longer follows `name` as a coach (or a spectator).
    func removeFollower(_ id: ConnectionID, of name: String, coach: Bool) {
        let wasFollowed = watchers[name] != nil || coaches[name] != nil
        if coach {
            coaches[name]?.remove(id)
            if coaches[name]?.isEmpty == true { coaches[name] = nil }
        } else {
            watchers[name]?.remove(id)
            if watchers[name]?.isEmpty == true { watchers[name] = nil }
        }
        if wasFollowed && watchers[name] == nil && coaches[name] == nil { followGeneration &+= 1 }
    }

    /// The runners somebody here follows by name (`watch:NAME`, `coach:NAME`, an event stream of a runner):
    /// not those only `watch:*` or `coach:*` follow, who see every runner's summary.
    package var followedRunners: Set<String> {
        Set(watchers.keys).union(coaches.keys)
    }
}
