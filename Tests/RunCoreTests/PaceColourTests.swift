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

    /// One fix a second at each (seconds, m/s) stretch, with optional jitter in metres along the way.
    static func run(_ stretches: [(Double, Double)], jitter: Double = 0, seed: UInt64 = 1) -> [Fix] {
        var random = SeededRandom(seed: seed)
        var fixes: [Fix] = []
        var metres = 0.0, seconds = 0.0
        for (duration, speed) in stretches {
            for _ in 0..<Int(duration) {
                fixes.append(fix(metres + (jitter > 0 ? random.gaussian() * jitter : 0), seconds))
                metres += speed
                seconds += 1
            }
        }
        return fixes
    }

    @Test("slow stretches are red, the median yellow, fast stretches green")
    func gradient() {
        let colours = PaceColours.colours(for: Self.run([(300, 2), (300, 3), (300, 4)]))
        #expect(colours[150] == PaceColours.red)
        #expect(colours[450] == PaceColours.yellow)
        #expect(colours[750] == PaceColours.green)
        let halfway = PaceColours.yellow.blended(with: PaceColours.green, fraction: 0.5)
        #expect(halfway == RGBColour(red: 0x80, green: 0xB5, blue: 0x27))
    }

    @Test("GPS noise on a steady run is not confetti")
    func steadyRunUnderNoiseStaysYellow() {
        // 5 km at a steady 3 m/s under 3-5 m of correlated GPS noise, through the engine, as the exports and
        // the page colour it: the segments' own speeds swing, the pace over 100 m hardly at all.
        for seed in UInt64(1)...4 {
            var tracker = RunTracker()
            tracker.feed(SyntheticRun.run(seed: seed).fixes)
            let colours = PaceColours.colours(for: tracker.finish().track)
            // Red, yellow or green at a glance: a segment counts as the one it is nearer to.
            let bands = colours.map { $0.red < 0x80 ? 2 : ($0.green < 0x76 ? 0 : 1) }
            let changes = zip(bands, bands.dropFirst()).filter { $0 != $1 }.count
            #expect(changes * 100 <= colours.count * 6, "seed \(seed): \(changes) changes in \(colours.count) segments")
            let yellow = bands.filter { $0 == 1 }.count
            #expect(yellow * 10 >= colours.count * 6, "seed \(seed): \(yellow) of \(colours.count) yellow")
        }
    }

    @Test("a walk break in a noisy run shows as the slow part")
    func walkBreakUnderNoise() {
        var tracker = RunTracker()
        tracker.feed(SyntheticRun.clean([(400, 3.2), (120, 1.3), (400, 3.2)]).fixes)
        let colours = PaceColours.colours(for: tracker.finish().track)
        // Inside the walk (away from its edges) red dominates; the running stretches are never red.
        #expect(colours[430..<490].allSatisfy { $0.green < 0x80 }, "the walk leans red")
        #expect(colours[50..<350].allSatisfy { $0.green > 0x90 }, "the run is not red")
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
