import RunCore
import RunStore
import Wire

/// What a hub tells the hubs of the other loops, and of the other nodes in a cluster: its runners' events and
/// what every hub must know of its runners (their keys, privacy, share and device tokens). The hub decides it
/// (``HubEffect/relay(_:)``); how it travels (a loop's inbox, the cluster bus) is not the hub's business.
package enum HubNews: Sendable {
    /// A runner's broadcast event, from the hub that owns the runner (or a cheer from any hub).
    case event(RelayedEvent)
    /// A runner was claimed, started a run, changed its privacy, or its badge history changed at the end of a
    /// run, on the hub that owns it.
    case runner(name: String, keyHash: String, history: BadgeHistory, privacy: RunnerPrivacy)
    /// A share token was issued or revoked on the runner's hub: every hub checks followers' tokens.
    case shares(runner: String, added: ShareToken?, removed: [String])
    /// A device token was issued or revoked on the runner's hub: every hub answers the apps' posts.
    case deviceAdded(DeviceToken)
    case devicesRemoved(hashes: [String])
}

/// One broadcast event as the other loops need it: the line to deliver, who hears it, its number, and what a
/// loop keeps of it to show late followers the run so far (``RemoteRun``).
package struct RelayedEvent: Sendable {
    /// What the event is, with what a mirror of the run keeps of it.
    package enum Kind: Sendable {
        /// `run:`: a run began.
        case started(runID: Int64, started: Double, startHistory: BadgeHistory)
        /// `pace:`, with the figures `runs:`, `badges:` and the overview show for a live run.
        /// `course`: the course the run follows, if any (its place along it is in the line).
        case pace(distance: Double, elapsed: Double, movingTime: Double, rejections: [FixRejection: Int], goal: Double?,
                  course: String? = nil)
        /// `badge:`.
        case badge
        /// `point:` (a course point passed: kept for late followers and the course's passing times).
        case point
        /// A cheer (kept for a late web viewer).
        case cheer
        /// `end:`.
        case ended(runID: Int64)
        /// A phone's alert (`alert:` of kind `sos`, `battery`, `battery_low`): the event's line is what those
        /// without the runner's share token see, `fullLine` what the runner and its share tokens' holders see.
        case deviceAlert(fullLine: [UInt8])
        /// Anything else (`split:`).
        case other
    }

    package let runner: String
    package let line: [UInt8]
    package let audience: Hub.Audience
    package let sequence: UInt64
    package let kind: Kind
    /// A recovered or taken-over run's story so far, for the mirrors only: its followers heard it already.
    package var isCatchUp = false
    /// A catch-up for other nodes whose bus lost some of the run's events (Redis away too long): their mirrors
    /// take it as a catch-up, and their followers of the runner get it as a late joiner does (what they
    /// missed, as a snapshot). Never for this node's other loops, which missed nothing.
    package var isSnapshot = false

    package init(runner: String, line: [UInt8], audience: Hub.Audience, sequence: UInt64, kind: Kind,
                 isCatchUp: Bool = false) {
        self.runner = runner
        self.line = line
        self.audience = audience
        self.sequence = sequence
        self.kind = kind
        self.isCatchUp = isCatchUp
    }
}
