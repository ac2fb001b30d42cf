import Foundation
import Testing
@testable import RunCore

@Suite("Badges")
struct BadgeTests {
    static let expected: [(String, Double, String)] = [
        ("Earth", 0, "earth"), ("Earth's Atmosphere", 804.672, "atmosphere"), ("The Moon", 1609.344, "moon"),
        ("Earth's Magnetotail", 2414.016, "magnetotail"), ("Mars", 3218.688, "mars"), ("Phobos", 4023.36, "phobos"),
        ("Deimos", 4828.032, "deimos"), ("The Asteroid Belt", 5632.704, "asteroid_belt"), ("Ceres", 6437.376, "ceres"),
        ("Jupiter", 7242.048, "jupiter"), ("Io", 8046.72, "io"), ("Europa", 8851.392, "europa"),
        ("Ganymede", 9656.064, "ganymede"), ("Callisto", 11265.408, "callisto"), ("Saturn", 12874.752, "saturn"),
        ("Mimas", 14484.096, "mimas"), ("Enceladus", 16093.44, "enceladus"), ("Tethys", 17702.784, "tethys"),
        ("Dione", 19312.128, "dione"), ("Rhea", 20921.472, "rhea"), ("Titan", 22530.816, "titan"),
        ("Iapetus", 24140.16, "iapetus"), ("Uranus", 25749.504, "uranus"), ("Miranda", 27358.848, "miranda"),
        ("Ariel", 28968.192, "ariel"), ("Umbriel", 30577.536, "umbriel"), ("Titania", 32186.88, "titania"),
        ("Oberon", 33796.224, "oberon"), ("Neptune", 35405.568, "neptune"), ("Triton", 37014.912, "triton"),
        ("The Kuiper Belt", 38624.256, "kuiper_belt"), ("Pluto", 40233.6, "pluto"),
        ("Interstellar Space", 42195, "interstellar_space"),
    ]

    @Test("the resource holds the 33 badges in order, each with information")
    func resource() {
        #expect(Badges.all.count == 33)
        for (badge, (name, distance, id)) in zip(Badges.all, Self.expected) {
            #expect(badge.name == name && badge.distance == distance && badge.id == id)
            #expect(badge.information.count > 20)
            #expect(Badges.badge(id: id) == badge)
        }
        #expect(Badges.badge(id: "vulcan") == nil)
    }

    @Test("next is strictly farther, best strictly below", arguments: [
        (-1.0, "earth", "earth"), (0, "atmosphere", "earth"), (0.001, "atmosphere", "earth"),
        (804.671, "atmosphere", "earth"), (804.672, "moon", "earth"), (804.673, "moon", "atmosphere"),
        (42_194.9, "interstellar_space", "pluto"), (42_195, nil, "pluto"), (42_195.1, nil, "interstellar_space"),
        (1e9, nil, "interstellar_space"),
    ] as [(Double, String?, String)])
    func nextAndBest(distance: Double, next: String?, best: String) {
        #expect(Badges.next(for: distance)?.id == next)
        #expect(Badges.best(for: distance).id == best)
    }

    @Test("a marathon-length run earns all 33 badges, in order, each once")
    func marathon() throws {
        let run = SyntheticRun.clean([(12_100, 3.5)])  // 42,350 m
        var tracker = RunTracker()
        var awards: [BadgeAward] = []
        for fix in run.fixes { awards += tracker.add(fix, now: fix.timestamp).progress!.awards }
        #expect(awards.map(\.badge.id) == Self.expected.map(\.2))
        #expect(awards.allSatisfy { $0.tier == .earned })
        #expect(awards[0].elapsed == 0 && awards[0].timestamp == run.fixes[0].timestamp)
        for award in awards.dropFirst() {
            let truth = try #require(run.trueElapsed(at: award.badge.distance))
            #expect(abs(award.elapsed - truth) < 1, "\(award.badge.id) at \(award.elapsed), truly \(truth)")
            #expect(abs(award.speed - award.badge.distance / award.elapsed) < 1e-9)
        }
        #expect(tracker.history.records.count == 33)
        #expect(tracker.finish().awards == awards)
        #expect(tracker.finish().checkpoints.count == 32)
        #expect(tracker.snapshot?.nextBadge == nil && tracker.snapshot?.distanceToNextBadge == 0)
    }

    @Test("tiers: earned, then silver at 1.05×, gold at 1.10×, best when faster than every earlier run")
    func tiersAlone() {
        let moon = Badges.badge(id: "moon")!
        var history = BadgeHistory()
        #expect(history.recordCheckpoint(moon, speed: 3.0, at: 1) == [.earned])
        #expect(history.recordCheckpoint(moon, speed: 2.9, at: 2) == [])
        #expect(history.recordCheckpoint(moon, speed: 3.1, at: 3) == [.best])  // 1.033×: faster, no silver
        #expect(history.recordCheckpoint(moon, speed: 3.16, at: 4) == [.silver, .best])
        #expect(history.recordCheckpoint(moon, speed: 3.2, at: 5) == [.best])  // silver only once
        #expect(history.recordCheckpoint(moon, speed: 3.31, at: 6) == [.gold, .best])
        #expect(history.recordCheckpoint(moon, speed: 3.5, at: 7) == [.best])
        #expect(history.recordCheckpoint(moon, speed: 3.4, at: 8) == [])
        let record = history.records["moon"]!
        #expect(record.referenceSpeed == 3.0 && record.silverAt == 4 && record.goldAt == 6 && record.bestSpeed == 3.5)

        var jump = BadgeHistory()
        _ = jump.recordCheckpoint(moon, speed: 3.0, at: 1)
        #expect(jump.recordCheckpoint(moon, speed: 3.4, at: 2) == [.silver, .gold, .best])

        let earth = Badges.all[0]
        var start = BadgeHistory()
        #expect(start.recordCheckpoint(earth, speed: 0, at: 1) == [.earned])
        #expect(start.recordCheckpoint(earth, speed: 0, at: 2) == [])
    }

    @Test("three runs: earned, then silver and best, then gold and best; history survives a round trip")
    func threeRuns() throws {
        func awards(speed: Double, history: inout BadgeHistory, start: Double) throws -> [String: [BadgeTier]] {
            let run = SyntheticRun.clean([(Int(1700 / speed), speed)], startTime: start)
            var tracker = RunTracker(history: history)
            var won: [String: [BadgeTier]] = [:]
            for fix in run.fixes {
                for award in tracker.add(fix, now: fix.timestamp).progress!.awards { won[award.badge.id, default: []].append(award.tier) }
            }
            // The store keeps history as JSON between runs.
            history = try JSONDecoder().decode(BadgeHistory.self, from: JSONEncoder().encode(tracker.history))
            return won
        }
        var history = BadgeHistory()
        let first = try awards(speed: 3.0, history: &history, start: 1_700_000_000)
        #expect(first == ["earth": [.earned], "atmosphere": [.earned], "moon": [.earned]])
        let second = try awards(speed: 3.2, history: &history, start: 1_700_100_000)
        #expect(second == ["atmosphere": [.silver, .best], "moon": [.silver, .best]])
        let third = try awards(speed: 3.4, history: &history, start: 1_700_200_000)
        #expect(third == ["atmosphere": [.gold, .best], "moon": [.gold, .best]])
        let fourth = try awards(speed: 3.3, history: &history, start: 1_700_300_000)
        #expect(fourth.isEmpty)
        #expect(abs(history.records["moon"]!.referenceSpeed - 3.0) < 0.02)
    }
}
