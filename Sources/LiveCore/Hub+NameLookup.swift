import RunStore
import Wire

extension Hub {
    /// What a command needs read from the store before the hub can decide it (a name, a course); nil when the
    /// hub can decide now. The hub asks for it as an effect and hears the command again once it has the answer.
    func storeLookUp(for command: Command, from id: ConnectionID) -> StoreLookUp? {
        switch command {
        case .location: nil
        case .course: courseToLookUp(in: command).map(StoreLookUp.course)
        default: nameToLookUp(in: command, from: id).map(StoreLookUp.runner)
        }
    }

    /// The runner name a command needs looked up in the store before the hub can decide it: `iam:`, `runs:` and
    /// `badges:` of a name that is neither in memory nor known (this second) to be nobody's. The driver reads it
    /// off the loop and hands the answer to ``learned(_:named:)`` first, so the hub never waits for the disk
    /// or the network on its loop (a PostgreSQL store is a round trip away). Nil when the hub can decide now.
    func nameToLookUp(in command: Command, from id: ConnectionID) -> String? {
        let name: String
        switch command {
        case .identify(let named, _) where sessions[id]?.name == nil: name = named
        case .listRuns(let named, _, _), .showBadges(let named): name = named
        default: return nil
        }
        guard runners[name] == nil, !unknownNames.contains(name) else { return nil }
        return name
    }

    /// What the store said of a name looked up off the loop: its record (remembered, unless the name became
    /// known meanwhile) or nobody's (remembered for a second, as a lookup on the loop would).
    package func learned(_ record: RunnerRecord?, named name: String) {
        assertOnLoop()
        guard runners[name] == nil else { return }
        if let record {
            know(record)
        } else if unknownNames.count < 10_000 {
            unknownNames.insert(name)
        }
    }
}
