import RunCore
import RunStore
import Wire

/// What the server asks the hub, by name: the transport reads no hub state directly. Each question changes
/// nothing (the ones that do are inputs, fed through the driver).
extension Hub {
    /// True once the connection's `iam:` succeeded.
    package func isIdentified(_ id: ConnectionID) -> Bool { sessions[id]?.name != nil }

    /// True when the runner has a run going on this loop.
    package func hasRunHere(_ name: String) -> Bool { runners[name]?.run != nil }

    /// True when the runner is known on this loop (in memory: seen since start, or told by another loop).
    package func isKnownHere(_ name: String) -> Bool { runners[name] != nil }

    /// True when the runner is known here, or has a live run on another loop or node.
    package func isKnownAnywhere(_ name: String) -> Bool { runners[name] != nil || remoteRuns[name] != nil }

    /// True for a runner whose live run another loop or node owns and which follows a course.
    package func isRemoteOnCourse(_ name: String) -> Bool { remoteRuns[name]?.course != nil }

    /// The course of that name this loop read from the store (nil: not read, or not there).
    package func course(named name: String) -> Course? { courses[name] }

    /// When the connection was accepted (nil for one the hub does not know).
    package func connectedAt(_ id: ConnectionID) -> Double? { sessions[id]?.connectedAt }

    /// What the hub knows of a connection, for a connection moving to another loop (it follows the same there).
    package func session(of id: ConnectionID) -> Session? { sessions[id] }

    /// `iam:NAME` without a key from a connection not identified yet, for a name this loop does not know: in a
    /// cluster the claim goes to the shared store first.
    package func claimsUnknownName(_ command: Command, from id: ConnectionID) -> Bool {
        guard case .identify(let name, nil) = command, !isIdentified(id) else { return false }
        return !isKnownHere(name)
    }

    /// `iam:NAME KEY` from a connection not identified yet, for a runner with no run here: in a cluster its run
    /// may live on after the node that had it died.
    package func resumesRunNotHere(_ command: Command, from id: ConnectionID) -> Bool {
        guard case .identify(let name, let key) = command, key != nil, !isIdentified(id) else { return false }
        return !hasRunHere(name)
    }
}

/// Inputs that set the hub up or count what the driver sent for it.
extension Hub {
    /// With several loops or nodes: `sequence` numbers events across them (nil: this hub counts alone), and
    /// `owns` says which runners this hub owns; the limits shared with the other loops (and the HTTP side).
    package func share(sequence: (() -> UInt64)?, owns: ((String) -> Bool)? = nil, cheerLimits: CheerLimits? = nil,
                       wrongTokens: WrongTokenLimiter? = nil) {
        sharedSequence = sequence
        if let owns { ownsRunner = owns }
        if let cheerLimits { self.cheerLimits = cheerLimits }
        if let wrongTokens { self.wrongTokens = wrongTokens }
    }

    /// Events are numbered after `first` (an event stream's `id:`). The driver seeds it from the clock, so a
    /// browser that resumes with a `Last-Event-ID` from before a restart is never taken for one that saw newer
    /// events (it gets a snapshot, as for an id too old).
    package func numberEvents(after first: UInt64) {
        eventSequence = max(eventSequence, first)
    }

    /// `check` runs at every input: the driver checks there that it feeds the hub on its loop, through itself.
    package func checkInputs(with check: @escaping () -> Void) {
        assertOnLoop = check
    }

    /// Lines the driver sent for the hub: answers read off the loop (`events`), and `err:` lines among them or
    /// of its own (`errors`), counted in `stats:` with the hub's.
    package func counted(events: Int = 0, errors: Int = 0) {
        statistics.eventsSent += events
        statistics.errorsSent += errors
    }

    /// Another node (or connection) claimed the name first: the hub knows it now (`record`, when the store
    /// had it), not as a name nobody has.
    package func nameTaken(_ name: String, record: RunnerRecord?) {
        if let record { know(record) }
        unknownNames.remove(name)
    }
}
