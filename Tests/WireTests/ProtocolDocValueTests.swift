import Foundation
import RunCore
import Testing
import Wire

/// protocol.md's examples must be right, not only parseable: badge distances and names, and the fields that
/// follow from them, agree with the engine.
@Suite struct ProtocolDocValueTests {
    static let events: [ServerEvent] = ProtocolDocTests.eventLines.compactMap { try? ServerEvent(line: $0) }

    func lookUp(_ id: String) -> Badge? { Badges.all.first { $0.id == id } }

    @Test func badgeLinesCarryTheBadgesOwnDistanceAndName() throws {
        let badges = Self.events.compactMap { if case .badge(let value) = $0 { value } else { nil } }
        #expect(!badges.isEmpty)
        for event in badges {
            let badge = try #require(lookUp(event.badgeID), "unknown badge \(event.badgeID)")
            #expect(abs(event.distance - badge.distance) < 0.005, "\(event.line): \(badge.id) is at \(badge.distance) m")
            #expect(event.badgeName == badge.name, "\(event.line)")
            if event.elapsed > 0 {
                #expect(abs(event.speed - event.distance / event.elapsed) < 0.0015, "speed is dist/time: \(event.line)")
            }
        }
    }

    @Test func boardLinesCarryTheBadgesOwnDistanceAndName() throws {
        let boards = Self.events.compactMap { if case .board(let value) = $0 { value } else { nil } }
        #expect(!boards.isEmpty)
        for event in boards {
            let badge = try #require(lookUp(event.badgeID), "unknown badge \(event.badgeID)")
            #expect(abs(event.distance - badge.distance) < 0.005, "\(event.line): \(badge.id) is at \(badge.distance) m")
            #expect(event.badgeName == badge.name, "\(event.line)")
            if event.earned != nil { #expect(event.left == 0, "an earned badge has nothing left: \(event.line)") }
        }
    }

    @Test func paceLinesNameTheRightNextBadgeAndDistanceLeft() throws {
        let paces = Self.events.compactMap { if case .pace(let value) = $0 { value } else { nil } }
        #expect(!paces.isEmpty)
        for event in paces {
            let next = Badges.all.first { $0.distance > event.distance }
            #expect(event.nextBadge == next?.id, "\(event.line)")
            if let next { #expect(abs(event.left - (next.distance - event.distance)) < 0.015, "\(event.line)") }
        }
    }
}
