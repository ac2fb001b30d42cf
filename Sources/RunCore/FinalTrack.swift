/// The final points of a run's track (older than the smoothing lag and the settling horizon), indexed by their
/// absolute position in the track, of which it may keep only the newest.
///
/// Cursors into the track (the gate's past point, the current pace's reference, the settling track's interval
/// ends, segment starts) are absolute indices; a tracker that does not keep its track
/// (``TrackerConfiguration/keepsTrack``) forgets the points no cursor can reach any more, and the indices
/// stay valid because `count` keeps counting the forgotten points.
struct FinalTrack: Sendable {
    /// The kept points, oldest first; `points[0]` is at absolute index `base`.
    private(set) var points: [TrackPoint] = []
    /// Absolute index of `points[0]`: the number of points dropped from storage.
    private(set) var base = 0
    /// Absolute index of the oldest point still readable (at or after `base`: forgetting drops storage in
    /// batches, so that a fix costs amortised constant work).
    private(set) var startIndex = 0

    /// Points forgotten before storage is compacted: small against the kept window's worth, large enough that
    /// the copy is rare.
    static let compactionBatch = 64

    /// A track of these points, the first at index 0.
    init(_ points: [TrackPoint] = []) { self.points = points }

    /// Number of points in the track, forgotten ones included (the absolute index one past the newest).
    var count: Int { base + points.count }

    /// The newest point, nil when the track is empty.
    var last: TrackPoint? { points.last }

    /// Whether the track has no points at all.
    var isEmpty: Bool { points.isEmpty && base == 0 }

    /// Points held in storage (the kept ones, plus forgotten ones not compacted yet).
    var storedCount: Int { points.count }

    /// The point at absolute index `index` (which must not be forgotten).
    @inline(__always)
    subscript(index: Int) -> TrackPoint { points[index - base] }

    /// Adds the newest point.
    mutating func append(_ point: TrackPoint) { points.append(point) }

    /// Forgets the points before absolute index `index`: nothing reads them again.
    mutating func forget(before index: Int) {
        let index = min(index, count)
        guard index > startIndex else { return }
        startIndex = index
        // Compacted when at least as many points are forgotten as kept, so each is copied at most once on
        // average (fixes sent flat out keep a long window's worth: the cursors follow time, not counts).
        let dropped = index - base
        if dropped >= max(Self.compactionBatch, points.count - dropped) {
            points.removeFirst(dropped)
            base = index
        }
    }

    /// The kept points, oldest first.
    var keptPoints: ArraySlice<TrackPoint> { points[(startIndex - base)...] }

    /// Calls `body` with the stored points and the absolute index of the first.
    @inline(__always)
    func withUnsafeBufferPointer<Result>(_ body: (UnsafeBufferPointer<TrackPoint>, Int) -> Result) -> Result {
        points.withUnsafeBufferPointer { body($0, base) }
    }
}

extension FinalTrack: CumulativeTrack {
    var pointCount: Int { count }

    func point(at index: Int) -> TrackPoint { self[index] }
}
