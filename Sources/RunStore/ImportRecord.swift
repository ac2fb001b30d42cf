import RunCore

/// Where an imported run came from: the file's format, what identifies the activity (runner, first point's
/// time, point count), the device's own distance, and where the device was paused. Stored in `run_imports`.
public struct ImportRecord: Sendable, Hashable {
    /// The imported run.
    public var runID: Int64
    /// The runner it was imported for.
    public var runner: String
    /// GPX or TCX.
    public var format: ActivityFormat
    /// Unix time of the activity's first usable point (before the engine's filter).
    public var firstPointTime: Double
    /// Usable points in the activity (all stored as the run's fixes).
    public var pointCount: Int
    /// Points the file had but that could not be used (no position or no time).
    public var skippedPoints: Int
    /// The distance the device measured, metres (TCX `DistanceMeters`); nil when the file has none.
    public var deviceDistance: Double?
    /// Sequences of the fixes that follow a pause (the first point of each segment after the first).
    public var pausesBefore: [Int64]

    /// Creates an import record.
    public init(runID: Int64, runner: String, format: ActivityFormat, firstPointTime: Double, pointCount: Int,
                skippedPoints: Int = 0, deviceDistance: Double? = nil, pausesBefore: [Int64] = []) {
        self.runID = runID
        self.runner = runner
        self.format = format
        self.firstPointTime = firstPointTime
        self.pointCount = pointCount
        self.skippedPoints = skippedPoints
        self.deviceDistance = deviceDistance
        self.pausesBefore = pausesBefore
    }
}
