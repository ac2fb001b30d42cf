import Testing
@testable import RunCore

@Suite("Pace colours")
struct PaceColourTests {
    static func fix(_ metres: Double, _ seconds: Double) -> Fix {
        Fix(latitude: 45 + metres / 111_130, longitude: 7, accuracy: 5, timestamp: 1000 + seconds)
    }

    @Test("hex is #RRGGBB uppercase")
    func hex() {
        #expect(PaceColours.red.hex == "#FF142C")
        #expect(PaceColours.yellow.hex == "#FFD700")
        #expect(PaceColours.green.hex == "#00924E")
        #expect(RGBColour(red: 0, green: 10, blue: 171).hex == "#000AAB")
    }

    @Test("slowest is red, the mean yellow, fastest green, in between blended")
    func gradient() {
        // Segments at 1, 2, 3 m/s for 10 s each: mean speed 2 m/s.
        let track = [Self.fix(0, 0), Self.fix(10, 10), Self.fix(30, 20), Self.fix(60, 30)]
        let colours = PaceColours.colours(for: track)
        #expect(colours.count == 3)
        #expect(colours[0] == PaceColours.red)
        #expect(colours[2] == PaceColours.green)
        // 2 m/s is the mean only to within the ellipsoid's rounding; allow one step per channel.
        #expect(abs(Int(colours[1].green) - Int(PaceColours.yellow.green)) <= 2 && colours[1].red >= 0xFE)
        let halfway = PaceColours.yellow.blended(with: PaceColours.green, fraction: 0.5)
        #expect(halfway == RGBColour(red: 0x80, green: 0xB5, blue: 0x27))
    }

    @Test("edge cases never crash or produce NaN", arguments: [
        ("no fixes", [Fix]()),
        ("one fix", [fix(0, 0)]),
        ("two fixes", [fix(0, 0), fix(10, 5)]),
        ("zero-length segment", [fix(0, 0), fix(0, 5), fix(10, 10)]),
        ("zero-duration segment", [fix(0, 0), fix(10, 0), fix(20, 5)]),
        ("backwards time", [fix(0, 10), fix(10, 0)]),
        ("all equal speeds", [fix(0, 0), fix(10, 5), fix(20, 10), fix(30, 15)]),
        ("all standing", [fix(0, 0), fix(0, 5), fix(0, 10)]),
        ("NaN position", [fix(0, 0), Fix(latitude: .nan, longitude: 7, accuracy: 5, timestamp: 1005), fix(10, 10)]),
    ] as [(String, [Fix])])
    func edgeCases(name: String, track: [Fix]) {
        let colours = PaceColours.colours(for: track)
        #expect(colours.count == max(track.count - 1, 0), "\(name)")
        if name == "all equal speeds" || name == "all standing" || name == "two fixes" {
            #expect(colours.allSatisfy { $0 == PaceColours.yellow }, "\(name)")
        }
        if name == "zero-duration segment" { #expect(colours[1] == PaceColours.yellow) }
    }

    @Test("a finished run's track is coloured segment by segment")
    func finishedRun() {
        var tracker = RunTracker()
        tracker.feed(SyntheticRun.clean([(60, 2), (60, 4)]).fixes)
        let track = tracker.finish().track
        let colours = PaceColours.colours(for: track)
        #expect(colours.count == track.count - 1)
        #expect(colours.first!.red > colours.first!.green)  // the slow start leans red
        #expect(colours.last!.green > colours.last!.red)  // the fast finish leans green
    }
}
