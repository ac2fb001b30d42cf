@testable import Broadcaster
@testable import LiveCore
import ClusterBus
import RunCore
import RunStore
import Testing

/// What a node publishes, another node reads back the same: the bus's fields for each kind of relay.
@Suite struct ClusterCodingTests {
    static func roundTrip(_ message: HubNews) -> HubNews? {
        let (_, fields) = ClusterCoding.fields(of: message)
        return ClusterCoding.message(of: BusEntry(stream: "s", id: StreamID(milliseconds: 1_700_000_000_123, sequence: 4),
                                                  node: "a", fields: fields))
    }

    @Test func aPaceKeepsItsFiguresAndRejectionCountsAndItsOwnersNumber() throws {
        let rejections: [FixRejection: Int] = [FixRejection.allCases[0]: 3, FixRejection.allCases[1]: 12]
        let sent = RelayedEvent(runner: "ann", line: Array("pace:ann dist=1.00\n".utf8), audience: .spectators,
                                sequence: 9, kind: .pace(distance: 1.5, elapsed: 20.25, movingTime: 19, rejections: rejections,
                                                        goal: nil))
        guard case .event(let read)? = Self.roundTrip(.event(sent)),
              case .pace(let distance, let elapsed, let moving, let counts, let goal, _) = read.kind else {
            Issue.record("not a pace")
            return
        }
        #expect(read.runner == "ann" && read.line == sent.line && read.audience == .spectators && !read.isCatchUp)
        #expect(distance == 1.5 && elapsed == 20.25 && moving == 19 && counts == rejections && goal == nil)
        if case .pace(_, _, _, _, _, let course) = read.kind { #expect(course == nil) }
        #expect(read.sequence == 9, "the owner's number: the same on every node, whichever stream brought it")
        // From a node before the owner's number went on the bus: the stream id's.
        let (_, fields) = ClusterCoding.fields(of: .event(sent))
        let old = ClusterCoding.message(of: BusEntry(stream: "s", id: StreamID(milliseconds: 1_700_000_000_123, sequence: 4),
                                                     node: "a", fields: fields.filter { $0.0 != "o" }))
        guard case .event(let oldRead)? = old else {
            Issue.record("not read")
            return
        }
        #expect(oldRead.sequence == 1_700_000_000_123_004)
    }

    @Test func privacyAndShareTokensCrossTheBus() throws {
        let privacy = RunnerPrivacy(isPrivate: true, zone: 250)
        guard case .runner(let name, _, _, let read)? = Self.roundTrip(.runner(name: "ann", keyHash: "k",
                                                                               history: BadgeHistory(), privacy: privacy))
        else {
            Issue.record("not a runner")
            return
        }
        #expect(name == "ann" && read == privacy)
        let share = ShareToken(hash: "h1", runner: "ann", created: 1_700_000_000.5, expires: 1_700_086_400)
        guard case .shares(let runner, let added, let removed)? = Self.roundTrip(.shares(runner: "ann", added: share,
                                                                                          removed: ["h0"])) else {
            Issue.record("not shares")
            return
        }
        #expect(runner == "ann" && added == share && removed == ["h0"])
    }

    @Test func aPhonesAlertCrossesTheBusWithBothItsLines() throws {
        let shown = Array("alert:ann kind=sos dist=0.00 time=0.0 pace=- lat=- lon=- ts=5\n".utf8)
        let full = Array("alert:ann kind=sos dist=0.00 time=0.0 pace=- lat=51.5000000 lon=-0.1200000 ts=5\n".utf8)
        let sos = RelayedEvent(runner: "ann", line: shown, audience: .everyone, sequence: 5, kind: .deviceAlert(fullLine: full))
        guard case .event(let read)? = Self.roundTrip(.event(sos)), case .deviceAlert(let fullLine) = read.kind else {
            Issue.record("not a phone's alert")
            return
        }
        #expect(read.line == shown && fullLine == full && read.audience == .everyone)
        #expect(DeviceAlertLines(sequence: 1, line: shown, fullLine: full).isSOS)
        #expect(!DeviceAlertLines(sequence: 1, line: Array("alert:ann kind=battery_low dist=0.00\n".utf8), fullLine: []).isSOS)
        // A node that knows no phone alerts reads it as another event and delivers the line as it is.
        var fields = ClusterCoding.fields(of: .event(sos)).fields
        #expect(fields.first { $0.0 == "k" }.map { String(decoding: $0.1, as: UTF8.self) } == "other")
        fields.removeAll { $0.0 == "f" }
        let old = ClusterCoding.message(of: BusEntry(stream: "s", id: StreamID(milliseconds: 1, sequence: 0), node: "a",
                                                     fields: fields))
        guard case .event(let plain)? = old, case .other = plain.kind else {
            Issue.record("not an other event")
            return
        }
    }

    @Test func aGoalDistanceAndACoachesOnlyAlertCrossTheBus() throws {
        let pace = RelayedEvent(runner: "ann", line: Array("pace:ann dist=1.00\n".utf8), audience: .spectators,
                                sequence: 2, kind: .pace(distance: 3, elapsed: 4, movingTime: 4, rejections: [:],
                                                         goal: 42195, course: "berlin"))
        guard case .event(let read)? = Self.roundTrip(.event(pace)), case .pace(_, _, _, _, let goal, let course) = read.kind else {
            Issue.record("not a pace")
            return
        }
        #expect(goal == 42195 && course == "berlin", "the course a run follows crosses the bus with its paces")
        let point = RelayedEvent(runner: "ann", line: Array("point:ann name=\"Aid 1\" along=5000.00 ts=1 time=1.0\n".utf8),
                                 audience: .everyone, sequence: 4, kind: .point)
        guard case .event(let readPoint)? = Self.roundTrip(.event(point)), case .point = readPoint.kind else {
            Issue.record("not a point")
            return
        }
        #expect(readPoint.line == point.line)
        let alert = RelayedEvent(runner: "ann", line: Array("alert:ann kind=off_pace\n".utf8), audience: .coaches,
                                 sequence: 3, kind: .other)
        guard case .event(let readAlert)? = Self.roundTrip(.event(alert)) else {
            Issue.record("not an event")
            return
        }
        #expect(readAlert.audience == .coaches)
    }

    @Test func aCatchUpStartAndDeviceTokensComeBackAsSent() throws {
        let start = RelayedEvent(runner: "bob", line: Array("run:bob id=3\n".utf8), audience: .everyone, sequence: 1,
                                 kind: .started(runID: 3, started: 1_700_000_000.5, startHistory: BadgeHistory()),
                                 isCatchUp: true)
        guard case .event(let read)? = Self.roundTrip(.event(start)), case .started(let id, let at, _) = read.kind else {
            Issue.record("not a start")
            return
        }
        #expect(id == 3 && at == 1_700_000_000.5 && read.isCatchUp && !read.isSnapshot && read.audience == .everyone)
        // A snapshot after a gap on the bus is a catch-up that followers hear too.
        var snapshot = start
        snapshot.isSnapshot = true
        guard case .event(let readSnapshot)? = Self.roundTrip(.event(snapshot)) else {
            Issue.record("no snapshot")
            return
        }
        #expect(readSnapshot.isCatchUp && readSnapshot.isSnapshot)
        let labelled = DeviceToken(hash: "h1", runner: "bob", created: 1_700_000_000.5, label: "Bob's \"Pixel\" 7")
        guard case .deviceAdded(let token)? = Self.roundTrip(.deviceAdded(labelled)),
              case .deviceAdded(let unlabelled)? = Self.roundTrip(.deviceAdded(DeviceToken(hash: "h3", runner: "bob", created: 5))),
              case .devicesRemoved(let hashes)? = Self.roundTrip(.devicesRemoved(hashes: ["h1", "h2"])) else {
            Issue.record("device tokens not read back")
            return
        }
        #expect(token == labelled && unlabelled.label == nil && unlabelled.created == 5 && hashes == ["h1", "h2"])
        // Loop-only messages (an inbox drained, a connection moving) cannot reach the bus: it codes `HubNews` only.
    }

    /// The cluster stream's summary: a runner's paces a second apart at most, everything else whole.
    @Test func aRunnersPacesGoToTheClusterStreamOnceASecondAndEverythingElseAlways() {
        func event(_ runner: String, _ kind: RelayedEvent.Kind, catchUp: Bool = false) -> HubNews {
            .event(RelayedEvent(runner: runner, line: Array("x\n".utf8), audience: .spectators, sequence: 1, kind: kind,
                                isCatchUp: catchUp))
        }
        let pace = RelayedEvent.Kind.pace(distance: 1, elapsed: 1, movingTime: 1, rejections: [:], goal: nil)
        var last: [String: Double] = [:]
        let paces = [100, 100.4, 100.99, 101.0, 101.5, 102.2].map { ClusterNode.isSummarized(event("ann", pace), at: $0, in: &last) }
        #expect(paces == [true, false, false, true, false, true])
        // Another runner has its own second; a badge, a catch-up pace and a claim always go.
        #expect(ClusterNode.isSummarized(event("bob", pace), at: 102.3, in: &last))
        #expect(ClusterNode.isSummarized(event("ann", .badge), at: 102.3, in: &last))
        #expect(ClusterNode.isSummarized(event("ann", pace, catchUp: true), at: 102.3, in: &last))
        #expect(ClusterNode.isSummarized(.devicesRemoved(hashes: ["h"]), at: 102.3, in: &last))
        // An end forgets the runner (the table holds live runs only); its next run's first pace goes.
        #expect(ClusterNode.isSummarized(event("ann", .ended(runID: 1)), at: 102.4, in: &last))
        #expect(last["ann"] == nil)
        #expect(ClusterNode.isSummarized(event("ann", pace), at: 102.5, in: &last))
        // A clock that went back does not hold paces up for long.
        #expect(ClusterNode.isSummarized(event("ann", pace), at: 50, in: &last))
    }

    /// A node reads a followed runner's events in its partition and in the cluster stream: each counts once,
    /// a pace older than one heard is stale, a run taken over by another node goes on; the rest (claims,
    /// tokens, shares) comes from the cluster stream only.
    @Test func anEventReadInTwoStreamsCountsOnceAndATakenOverRunGoesOn() {
        func event(_ number: UInt64, _ kind: RelayedEvent.Kind = .badge) -> HubNews {
            .event(RelayedEvent(runner: "ann", line: [], audience: .everyone, sequence: number, kind: kind))
        }
        var heard: [String: (node: String, number: UInt64)] = [:]
        func admits(_ message: HubNews, from node: String = "a", in stream: String) -> Bool {
            ClusterNode.admits(message, from: node, in: stream, cluster: "c", heard: &heard)
        }
        #expect(admits(event(10), in: "p"))
        #expect(!admits(event(10), in: "c"), "the same event from the cluster stream")
        #expect(admits(event(12), in: "c"), "a summary the partition has not brought yet")
        #expect(!admits(event(11), in: "p"), "an older pace, stale")
        #expect(!admits(event(12), in: "p"))
        #expect(admits(event(13), in: "p"))
        #expect(admits(event(5, .started(runID: 1, started: 0, startHistory: BadgeHistory())), from: "b", in: "p"),
                "another node took the run over: its numbers start afresh")
        #expect(admits(event(6), from: "b", in: "c"))
        #expect(!admits(event(6), from: "b", in: "p"))
        let claim = HubNews.runner(name: "ann", keyHash: "k", history: BadgeHistory(), privacy: RunnerPrivacy(isPrivate: false, zone: 0))
        #expect(admits(claim, in: "c") && !admits(claim, in: "p"))
        #expect(admits(.shares(runner: "ann", added: nil, removed: ["h"]), in: "c"))
        #expect(!admits(.shares(runner: "ann", added: nil, removed: ["h"]), in: "p"))
        #expect(admits(.devicesRemoved(hashes: ["h"]), in: "c") && !admits(.devicesRemoved(hashes: ["h"]), in: "p"))
    }
}
