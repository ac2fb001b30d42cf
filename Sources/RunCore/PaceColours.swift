/// A 24-bit colour.
public struct RGBColour: Sendable, Hashable, Codable {
    /// Red, green and blue components.
    public var red: UInt8, green: UInt8, blue: UInt8

    /// Creates a colour.
    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// `#RRGGBB`.
    public var hex: String { fatalError("TODO") }
}

/// Colours for a finished run's segments: red (slowest) through yellow (mean speed) to green (fastest).
public enum PaceColours {
    /// Slowest: #FF142C.
    public static let red = RGBColour(red: 0xFF, green: 0x14, blue: 0x2C)
    /// Mean speed: #FFD700.
    public static let yellow = RGBColour(red: 0xFF, green: 0xD7, blue: 0x00)
    /// Fastest: #00924E.
    public static let green = RGBColour(red: 0x00, green: 0x92, blue: 0x4E)

    /// One colour per segment (track.count - 1 of them; none for fewer than 2 fixes).
    public static func colours(for track: [Fix]) -> [RGBColour] { fatalError("TODO") }
}
