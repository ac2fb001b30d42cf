@testable import Broadcaster
@testable import LiveCore
import Dispatch
import Foundation
import MoonRunnerTestSupport
import RunCore
import RunStore
import Synchronization
import Testing
import Wire

/// `serve --loops N`: runners shared out among event loops by name, events relayed to every loop's followers,
/// connections moved to the loop that owns their runner. Tested with 2 loops, placements checked on the loops.
@Suite(.mayBlock) struct ShardTests {
    /// Reads a loop's state on its own thread.
    private static func onLoop<T: Sendable>(_ server: Server, _ read: @escaping @Sendable (ServerCore) -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<T?>(nil)
        server.loop.execute {
            result.withLock { $0 = read(server.core.value) }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }

    /// Open line-protocol connections on each loop.
    private static func lineConnections(_ group: ServerGroup) -> [Int] {
        group.servers.map { server in onLoop(server) { $0.lineConnectionCount } }
    }

    /// A client whose connection the listening loop dealt to loop `index` (others opened meanwhile are closed).
    private static func client(on index: Int, of group: ServerGroup) throws -> TestClient {
        var discarded: [TestClient] = []
        defer { discarded.forEach { $0.close() } }
        for _ in 0..<(2 * group.servers.count) {
            let before = lineConnections(group)
            let client = try TestClient(port: group.port)
            try client.send("ping:")
            try client.expectNext("ok:ping")
            let after = lineConnections(group)
            if after[index] == before[index] + 1 { return client }
            discarded.append(client)
        }
        throw TestClient.Unexpected(expected: "a connection on loop \(index)", got: "\(lineConnections(group))")
    }

    /// An HTTP client whose connection is on loop `index`.
    private static func httpClient(on index: Int, of group: ServerGroup) throws -> HTTPTestClient {
        for _ in 0..<(2 * group.servers.count) {
            let before = group.servers.map { server in onLoop(server) { $0.httpConnectionCount } }
            let client = try HTTPTestClient(port: try #require(group.httpPort))
            #expect(try client.get("/healthz").status == 200)
            let after = group.servers.map { server in onLoop(server) { $0.httpConnectionCount } }
            if after[index] == before[index] + 1 { return client }
        }
        throw TestClient.Unexpected(expected: "an HTTP connection on loop \(index)", got: "none")
    }

    private static func claim(_ name: String, on client: TestClient) throws -> String {
        try client.send("iam:\(name)")
        let reply = try OkEvent(event: Event.parse(client.expectNext("ok:iam")))
        return try #require(reply["key"])
    }

    @Test func aRunnerOnOneLoopIsHeardByFollowersOnBothInOrder() throws {
        try withServerGroup(loops: 2) { group in
            let name = group.runnerName(ownedBy: 1, prefix: "ann")
            var followers: [TestClient] = []
            for index in [0, 1, 0, 1] {
                let spectator = try Self.client(on: index, of: group)
                try spectator.send("watch:\(name)")
                try spectator.expectNext("ok:watch")
                followers.append(spectator)
            }
            let everyone = try Self.client(on: 0, of: group)
            try everyone.send("coach:*")
            try everyone.expectNext("ok:coach")
            let phone = try Self.client(on: 0, of: group)
            _ = try Self.claim(name, on: phone)
            #expect(Self.lineConnections(group) == [3, 3], "the runner moved to the loop that owns it")
            for line in straightRun(count: 30, speed: 4) { try phone.send(line) }
            try phone.send("stop:")
            try phone.expect("end:\(name)")
            var heard: [[String]] = []
            for spectator in followers {
                _ = try spectator.expect("end:\(name)")
                heard.append(spectator.received.filter { !$0.hasPrefix("ok:") })
            }
            #expect(heard.allSatisfy { $0 == heard[0] }, "every follower hears the same events in the same order")
            #expect(heard[0].first?.hasPrefix("run:\(name)") == true)
            #expect(heard[0].filter { $0.hasPrefix("pace:") }.count == 30)
            let runnerEvents = phone.received.filter { $0.hasPrefix("pace:") || $0.hasPrefix("badge:") || $0.hasPrefix("end:") }
            #expect(runnerEvents == heard[0].filter { $0.hasPrefix("pace:") || $0.hasPrefix("badge:") || $0.hasPrefix("end:") })
            _ = try everyone.expect("end:\(name)")
            let coached = everyone.received.filter { !$0.hasPrefix("ok:") }
            #expect(coached == heard[0].filter { $0.hasPrefix("run:") || $0.hasPrefix("badge:") || $0.hasPrefix("end:") },
                    "a coach of everyone on the other loop gets run, badges and end")
        }
    }

    @Test func aResumeLandingOnTheOtherLoopContinuesTheRun() throws {
        try withServerGroup(loops: 2) { group in
            let name = group.runnerName(ownedBy: 0, prefix: "bob")
            let watcher = try Self.client(on: 1, of: group)
            try watcher.send("watch:\(name)")
            try watcher.expectNext("ok:watch")
            let phone = try Self.client(on: 0, of: group)
            let key = try Self.claim(name, on: phone)
            let fixes = straightRun(count: 20)
            for line in fixes[..<10] { try phone.send(line) }
            let started = try RunStartedEvent(event: Event.parse(phone.expect("run:\(name)")))
            let tenth = String(fixes[9].split(separator: ",").last!)
            _ = try phone.lines(until: "the tenth ack") { $0 == "ack:\(name) ts=\(tenth)" }
            phone.close()

            let again = try Self.client(on: 1, of: group)
            try again.send("iam:\(name) \(key)")
            let ok = try OkEvent(event: Event.parse(again.expectNext("ok:iam")))
            #expect(ok["resumed"] == String(started.runID))
            try again.expectNext("run:\(name)")
            for line in fixes[5...] { try again.send(line) }
            try again.send("stop:")
            let end = try RunEndedEvent(event: Event.parse(again.expect("end:\(name)")))
            #expect(end.runID == started.runID && end.filteredCount == 0)
            #expect(!again.received.contains { $0.hasPrefix("err:") })
            _ = try watcher.expect("end:\(name)")
            #expect(watcher.received.filter { $0.hasPrefix("pace:\(name)") }.count == 20, "each fix counted once")
        }
    }

    @Test func aLateFollowerOnAnotherLoopGetsTheRunSoFarAndTheHistoryWithLiveFigures() throws {
        try withServerGroup(loops: 2) { group in
            let name = group.runnerName(ownedBy: 0, prefix: "cat")
            let phone = try Self.client(on: 0, of: group)
            _ = try Self.claim(name, on: phone)
            let fixes = straightRun(count: 40, speed: 5)
            for line in fixes { try phone.send(line) }
            let last = String(fixes.last!.split(separator: ",").last!)
            _ = try phone.lines(until: "the last pace") { $0.hasPrefix("pace:\(name)") && $0.contains("ts=\(last) ") }
            let latePace = phone.received.last { $0.hasPrefix("pace:") }!
            let badges = phone.received.filter { $0.hasPrefix("badge:") }

            let late = try Self.client(on: 1, of: group)
            try late.send("watch:\(name)")
            try late.expectNext("ok:watch")
            #expect(try late.expectNext("run:\(name)").hasPrefix("run:\(name)"))
            for badge in badges { #expect(try late.nextLine() == badge) }
            #expect(try late.nextLine() == latePace)

            try late.send("runs:\(name)")
            let item = try RunListItemEvent(event: Event.parse(late.expect("item:\(name)")))
            let pace = try PaceEvent(event: Event.parse(latePace))
            #expect(item.distance == pace.distance && item.distance > 150, "the live figures from the owning loop")
            try late.send("run:\(item.runID)")
            let summary = try RunSummaryEvent(event: Event.parse(late.expect("summary:\(name)")))
            #expect(summary.status == "live" && abs(summary.distance - pace.distance) < 0.01)
            try late.send("stats:")
            let stats = try StatsEvent(event: Event.parse(late.expect("stats:")))
            #expect(stats["live_runs"] == 1 && stats["connections"] == 2, "counters of both loops")
        }
    }

    @Test func aCheerFromAnotherLoopReachesTheRunner() throws {
        try withServerGroup(loops: 2) { group in
            let name = group.runnerName(ownedBy: 1, prefix: "dan")
            let phone = try Self.client(on: 1, of: group)
            _ = try Self.claim(name, on: phone)
            try phone.send(straightRun(count: 1)[0])
            _ = try phone.expect("run:\(name)")
            let fan = try Self.client(on: 0, of: group)
            try fan.send("watch:*")
            try fan.expectNext("ok:watch")
            try fan.send("msg:go go go")
            #expect(try OkEvent(event: Event.parse(fan.expect("ok:msg")))["count"] == "1")
            #expect(try phone.expect("msg:\(name)").contains("go go go"))
        }
    }

    @Test func aPhoneAppPostingToAnotherLoopsRunnerIsAnsweredAfterCommit() async throws {
        try await onItsOwnThread {
            try withServerGroup(loops: 2) { group in
                let name = group.runnerName(ownedBy: 1, prefix: "eve")
                let phone = try Self.client(on: 1, of: group)
                _ = try Self.claim(name, on: phone)
                try phone.send("device:")
                let token = try #require(try OkEvent(event: Event.parse(phone.expectNext("ok:device")))["token"])
                let watcher = try Self.client(on: 0, of: group)
                try watcher.send("watch:\(name)")
                try watcher.expectNext("ok:watch")
                // The app's connection starts on the other loop and moves to the runner's with its first post.
                let app = try Self.httpClient(on: 0, of: group)
                let start = Date().timeIntervalSince1970 - 9
                for index in 0..<10 {
                    let lat = 51.5 + Double(index) * 3 / 111_229
                    let answer = try app.get("/osmand?id=\(token)&timestamp=\(Int64(start) + Int64(index))&lat=\(lat)&lon=-0.12&accuracy=5")
                    #expect(answer.status == 200)
                }
                // The last position's pace (a slow machine may have made the first a late arrival, measured
                // into the run without a pace of its own).
                _ = try watcher.lines(until: "the last pace", timeout: 20) {
                    $0.hasPrefix("pace:\(name)") && $0.contains(" ts=\(Int64(start) + 9) ")
                }
                #expect(group.servers.map { server in Self.onLoop(server) { $0.httpConnectionCount } } == [0, 1],
                        "the app's connection moved to the runner's loop")
                #expect(try app.get("/osmand?id=wrongtoken1&timestamp=1&lat=1&lon=1").status == 403)
            }
        }
    }

    @Test func aFullInboxStopsTheOwnerReadingFixesUntilItDrains() throws {
        try withServerGroup(loops: 2, { $0.relayInboxHighWater = 40 }) { group in
            let name = group.runnerName(ownedBy: 0, prefix: "fay")
            let phone = try Self.client(on: 0, of: group)
            _ = try Self.claim(name, on: phone)
            let pinger = try Self.client(on: 0, of: group)
            // Loop 1 is busy: nothing it is sent is handled until it is let go.
            let busy = DispatchSemaphore(value: 0)
            group.servers[1].loop.execute { busy.wait() }
            var released = false
            defer { if !released { busy.signal() } }
            // A flood of fixes 4 ms apart (all within the filter's clock allowance), each one a pace event.
            let start = Date().timeIntervalSince1970 - 5
            let fixes = (0..<1000).map { "loc:\(51.5 + Double($0) * 1e-6),-0.12,5,\(start + Double($0) * 0.004)" }
            try phone.write(Array(fixes.joined(separator: "\n").appending("\n").utf8))
            let deadline = Date().addingTimeInterval(10)
            while !Self.onLoop(group.servers[0], { $0.isStoreBacklogged }) {
                #expect(Date() < deadline, "the owner stops reading")
                if Date() >= deadline { break }
                usleep(2_000)
            }
            try pinger.send("ping:")
            try pinger.expectNext("ok:ping")
            let accepted = Self.onLoop(group.servers[0]) { $0.hub.statistics.fixesAccepted }
            #expect(accepted < 1000, "reading stopped before the end of the flood")
            busy.signal()
            released = true
            let last = String(fixes.last!.split(separator: ",").last!)
            _ = try phone.lines(until: "the last ack", timeout: 20) { $0 == "ack:\(name) ts=\(last)" }
        }
    }

    @Test func anEventStreamResumedOnTheOtherLoopGetsWhatItMissed() async throws {
        try await onItsOwnThread {
            try withServerGroup(loops: 2) { group in
                let name = group.runnerName(ownedBy: 1, prefix: "gil")
                let phone = try Self.client(on: 1, of: group)
                _ = try Self.claim(name, on: phone)
                let run = straightRun(count: 11, from: Date().timeIntervalSince1970 - 8)
                for line in run[..<5] { try phone.send(line) }
                _ = try phone.lines(until: "pace of fix 5") { $0.contains("ts=\(run[4].split(separator: ",").last!) ") }
                let web = try Self.httpClient(on: 0, of: group)
                _ = try web.openStream("watch=\(name)")
                _ = try web.events(until: "track")
                for line in run[5..<8] { try phone.send(line) }
                var last = try web.nextEvent()
                while !(last.event == "pace" && last.json["time"] as? Double == 7) { last = try web.nextEvent() }
                let lastID = try #require(last.id)
                web.close()
                for line in run[8..<11] { try phone.send(line) }
                _ = try phone.lines(until: "pace of fix 11") { $0.contains("ts=\(run[10].split(separator: ",").last!) ") }
                let back = try Self.httpClient(on: 1, of: group)
                _ = try back.openStream("watch=\(name)", headers: "Last-Event-ID: \(lastID)\r\n")
                var resumed: [HTTPTestClient.StreamEvent] = []
                while resumed.count < 3 { resumed.append(try back.nextEvent()) }
                let times = resumed.map { $0.json["time"] as? Double ?? 0 }
                #expect(resumed.allSatisfy { $0.event == "pace" } && times == [8, 9, 10],
                        "the three missed fixes, numbered alike on both loops: \(resumed)")
            }
        }
    }

    @Test func metricsCountEveryLoop() async throws {
        try await onItsOwnThread {
            try withServerGroup(loops: 2) { group in
                var phones: [TestClient] = []
                for (index, prefix) in [(0, "hal"), (1, "ida")] {
                    let name = group.runnerName(ownedBy: index, prefix: prefix)
                    let phone = try Self.client(on: index, of: group)
                    _ = try Self.claim(name, on: phone)
                    let fixes = straightRun(count: 5)
                    for line in fixes { try phone.send(line) }
                    let last = String(fixes.last!.split(separator: ",").last!)
                    _ = try phone.lines(until: "the last ack") { $0 == "ack:\(name) ts=\(last)" }
                    phones.append(phone)
                }
                for index in 0..<2 {
                    let scraper = try Self.httpClient(on: index, of: group)
                    let text = try scraper.get("/metrics").text
                    #expect(text.contains("moonrunner_fixes_accepted_total 10\n"), "scraped on loop \(index)")
                    #expect(text.contains("moonrunner_live_runs 2\n"))
                    #expect(text.contains("moonrunner_http_connections 1\n"))
                }
            }
        }
    }

    @Test func atShutdownFollowersOnTheOtherLoopGetTheEndBeforeTheConnectionCloses() throws {
        try withServerGroup(loops: 2) { group in
            let name = group.runnerName(ownedBy: 1, prefix: "jo")
            let watcher = try Self.client(on: 0, of: group)
            try watcher.send("watch:\(name)")
            try watcher.expectNext("ok:watch")
            let phone = try Self.client(on: 1, of: group)
            _ = try Self.claim(name, on: phone)
            try phone.send(straightRun(count: 1)[0])
            _ = try watcher.expect("run:\(name)")
            group.shutdown()
            let last = try watcher.awaitClose()
            let end = try #require(last.firstIndex { $0.hasPrefix("end:\(name)") }, "\(last)")
            let stopping = try #require(last.firstIndex { $0.hasPrefix("err:shutting_down") }, "\(last)")
            #expect(end < stopping && last[end].contains("reason=shutdown"))
        }
    }
}

extension ShardTests {
    /// A private runner owned by one loop: followers on both loops, of everyone or of its name, hear nothing of
    /// it; a share link works from the other loop and its revocation reaches there at once.
    @Test func aPrivateRunnerIsHiddenOnEveryLoopAndItsShareLinkWorksOnAny() throws {
        try withServerGroup(loops: 2) { group in
            let name = group.runnerName(ownedBy: 1, prefix: "ann")
            let phone = try Self.client(on: 0, of: group)
            _ = try Self.claim(name, on: phone)
            try phone.send("private:on")
            try phone.expect("ok:private private=yes")
            var strangers: [TestClient] = []
            for (index, target) in [(0, "*"), (1, "*"), (0, name)] {
                let stranger = try Self.client(on: index, of: group)
                try stranger.send("watch:\(target)")
                try stranger.expectNext("ok:watch")
                strangers.append(stranger)
            }
            try phone.send("share:3600")
            let token = try #require(try OkEvent(event: Event.parse(phone.expect("ok:share")))["token"])
            let friend = try Self.client(on: 0, of: group)
            try friend.send("watch:\(name) \(token)")
            try friend.expectNext("ok:watch")
            for line in straightRun(count: 20, speed: 4) { try phone.send(line) }
            _ = try friend.expect("pace:\(name)")
            try phone.send("unshare:\(token)")
            try phone.expect("ok:unshare count=1")
            _ = try friend.expect("err:revoked")
            try phone.send("stop:")
            try phone.expect("end:\(name)")
            // A ping after the end: everything before it has been delivered.
            for client in strangers + [friend] {
                try client.send("ping:")
                _ = try client.expect("ok:ping")
            }
            #expect(!friend.received.contains { $0.hasPrefix("end:") }, "revoked before the end")
            for stranger in strangers {
                #expect(!stranger.received.contains { $0.contains(name) && !$0.hasPrefix("ok:") }, "\(stranger.received)")
            }
        }
    }
}

extension ShardTests {
    /// A phone's SOS raised on the loop that owns the runner reaches followers on the other loop at once: the
    /// position for a share link's holder, withheld by the privacy zone for the others; a late follower there
    /// gets it too.
    @Test func anSOSReachesTheOtherLoopWithThePositionOnlyForShareLinks() throws {
        try withServerGroup(loops: 2) { group in
            let name = group.runnerName(ownedBy: 1, prefix: "ann")
            let phone = try Self.client(on: 0, of: group)
            _ = try Self.claim(name, on: phone)
            try phone.send("privacy:200")
            try phone.expect("ok:privacy")
            try phone.send("share:3600")
            let token = try #require(try OkEvent(event: Event.parse(phone.expect("ok:share")))["token"])
            let friend = try Self.client(on: 0, of: group)
            try friend.send("coach:\(name) \(token)")
            try friend.expectNext("ok:coach")
            let stranger = try Self.client(on: 0, of: group)
            try stranger.send("coach:\(name)")
            try stranger.expectNext("ok:coach")
            let run = straightRun(count: 5, speed: 4)
            for line in run { try phone.send(line) }
            _ = try friend.expect("run:\(name)")
            let owner = group.servers[1]
            let time = Double(Int(Date().timeIntervalSince1970))
            let raised = Self.onLoop(owner) { server -> Bool in
                guard let entry = server.hub.runners[name] else { return false }
                server.decide { $0.raiseAlarm("sos", at: LocationCommand(latitude: 51.5001, longitude: -0.12, accuracy: 5,
                                                                 timestamp: time, timestampText: String(Int(time))),
                                      for: entry, now: time) }
                return true
            }
            #expect(raised, "loop 1 owns \(name)")
            #expect(try friend.expect("alert:\(name) kind=sos").contains("lat=51.5001000 lon=-0.1200000"))
            #expect(try stranger.expect("alert:\(name) kind=sos").contains("lat=- lon=-"))
            #expect(try phone.expect("alert:\(name) kind=sos").contains("lat=51.5001000"), "the runner's own")
            let late = try Self.client(on: 0, of: group)
            try late.send("watch:\(name)")
            #expect(try late.expect("alert:\(name) kind=sos").contains("lat=- lon=-"))
        }
    }

    /// Runners on a course on both loops: the course's board, asked on either loop, has them all (the owner's
    /// paces carry the course to the other loop).
    @Test func aCoursesBoardHasTheRunnersOfEveryLoop() throws {
        let store = MemoryRunStore()
        let at = { (north: Double) in Coordinate(latitude: 51.5 + north / 111_229, longitude: -0.12) }
        store.submit(.course(StoredCourse(name: "park", path: [at(0), at(3000)], points: [], created: 1)))
        try withServerGroup(loops: 2, store: store) { group in
            let fast = group.runnerName(ownedBy: 0, prefix: "fast"), slow = group.runnerName(ownedBy: 1, prefix: "slow")
            var phones: [TestClient] = []
            for (index, name) in [(0, fast), (1, slow)] {
                let phone = try Self.client(on: index, of: group)
                _ = try Self.claim(name, on: phone)
                try phone.send("course:park")
                try phone.expectNext("ok:course name=park")
                phones.append(phone)
            }
            let start = Date().timeIntervalSince1970 - 1
            for (phone, speed) in zip(phones, [4.0, 3.0]) {
                let fixes = straightRun(count: 60, from: start, speed: speed)
                for line in fixes { try phone.send(line) }
                let last = String(fixes[59].split(separator: ",").last!)
                _ = try phone.lines(until: "the last pace") { $0.hasPrefix("pace:") && $0.contains("ts=\(last) ") }
            }
            for index in [0, 1] {
                let asker = try Self.client(on: index, of: group)
                try asker.send("leaders:course=park")
                let lines = try asker.lines(until: "done:leaders") { $0.hasPrefix("done:leaders") }
                let leaders = try lines.filter { $0.hasPrefix("leader:") }.map { try LeaderEvent(line: $0) }
                #expect(leaders.map(\.runner) == [fast, slow], "asked on loop \(index): \(lines)")
                #expect(lines.last == "done:leaders count=2 more=no")
            }
        }
    }
}
