import RunCore

/// A run's fixes in time order (``RunStore/fixesInTimeOrder(ofRun:)``), read a page at a time, so a reader that
/// goes through a long run (a replay) holds a page, not the run.
///
/// Fixes are stored by sequence (arrival order), and time order differs from it wherever a phone sent positions
/// late. So the timeline first reads the run once by sequence and keeps, for each stretch of some hundreds of
/// fixes (a *segment*), the earliest and latest key it holds: at most ``maximumSegments`` of them whatever the
/// run's length (neighbours are merged past it). A page is then the `limit` smallest keys after the last one
/// handed out, found by reading only the segments that may hold them, earliest first, and stopping at the first
/// segment that starts after the page is full. A run sent in time order reads a page's worth of fixes and one
/// segment more; a run whose late fixes reach far back reads more segments per page, never more memory.
///
/// A value: the caller keeps it between pages, reads off its thread (it is `Sendable`), and drops it to stop.
/// The run should not change meanwhile (a replayed run is finished): a fix stored after the first read may be
/// missed, and no fix is ever handed out twice (each page starts after the last key handed out).
public struct FixTimeline: Sendable {
    /// Where a fix stands in time order: its timestamp, ties by sequence (each fix has its own).
    public struct Key: Comparable, Hashable, Sendable {
        /// The fix's own time (unix seconds).
        public var timestamp: Double
        /// Its arrival order in the run: orders fixes with the same time.
        public var sequence: Int64

        /// The key of a stored fix.
        public init(_ stored: StoredFix) {
            timestamp = stored.fix.timestamp
            sequence = stored.sequence
        }

        /// Earlier in time order.
        public static func < (left: Key, right: Key) -> Bool {
            (left.timestamp, left.sequence) < (right.timestamp, right.sequence)
        }
    }

    /// Which of a run's fixes the timeline holds.
    public enum Selection: Sendable {
        /// Those of ``RunStore/fixesInTimeOrder(ofRun:)``: all but the ones filtered `out_of_order` or `future`.
        case measured
        /// Only the fixes the engine accepted (what a replay shows).
        case accepted
    }

    /// Consecutive stored fixes of the run, from sequence `first`: `stored` of them (whatever their selection,
    /// so a read of `stored` fixes from `first` gives back exactly these), and the span of keys of the selected
    /// ones (nil when none is).
    struct Segment: Sendable {
        var first: Int64
        var stored: Int
        var earliest: Key?
        var latest: Key?

        /// This segment and the one after it, as one.
        func merged(with next: Segment) -> Segment {
            Segment(first: first, stored: stored + next.stored,
                    earliest: [earliest, next.earliest].compactMap { $0 }.min(),
                    latest: [latest, next.latest].compactMap { $0 }.max())
        }
    }

    /// The run.
    public let runID: Int64
    /// Which fixes it holds.
    public let selection: Selection
    /// Fixes selected in the run when it was first read.
    public let count: Int
    /// Fixes handed out so far.
    public private(set) var delivered = 0
    /// The key of the last fix handed out; nil before the first page.
    public private(set) var position: Key?
    /// The run's segments, by sequence; at most ``maximumSegments``.
    private(set) var segments: [Segment] = []
    /// True once a page came back short: nothing is left (even if the run changed since it was counted).
    private var isExhausted = false

    /// Fixes read at once while the run is first read (segments start this size and double when merged).
    public static let segmentFixes = 512
    /// Segments kept at most: a few kilobytes of keys per timeline, however long the run.
    public static let maximumSegments = 256

    /// Reads the run once by sequence (a page of ``segmentFixes`` at a time), keeping only its segments.
    public init(run id: Int64, selecting selection: Selection = .measured, in store: any RunStore,
                segmentFixes: Int = FixTimeline.segmentFixes,
                maximumSegments: Int = FixTimeline.maximumSegments) throws(StoreError) {
        runID = id
        self.selection = selection
        var step = max(1, segmentFixes)
        var from = Int64.min
        var count = 0
        while true {
            let asked = step
            let page = try store.fixes(ofRun: id, from: from, limit: asked)
            guard let last = page.last else { break }
            var segment = Segment(first: page[0].sequence, stored: page.count)
            for stored in page where Self.selects(stored, selection) {
                let key = Key(stored)
                segment.earliest = min(segment.earliest ?? key, key)
                segment.latest = max(segment.latest ?? key, key)
                count += 1
            }
            segments.append(segment)
            if segments.count > max(2, maximumSegments) {
                segments = Self.mergingPairs(segments)
                step *= 2
            }
            guard page.count == asked, last.sequence < .max else { break }
            from = last.sequence + 1
        }
        self.count = count
    }

    /// True once every fix has been handed out.
    public var isFinished: Bool { isExhausted || delivered >= count }

    /// The next `limit` fixes in time order (fewer at the end, none once finished).
    public mutating func next(_ limit: Int, from store: any RunStore) throws(StoreError) -> [StoredFix] {
        guard limit > 0, !isFinished else { return [] }
        let after = position
        // Segments that may hold keys after the position, earliest first: once the page is full, a segment
        // starting after its last key (and every one after it) has nothing for it.
        let candidates = segments.filter { segment in
            guard let latest = segment.latest else { return false }
            return after.map { latest > $0 } ?? true
        }.sorted { $0.earliest! < $1.earliest! }
        var page: [StoredFix] = []
        var bound: Key?
        for segment in candidates {
            if let bound, let earliest = segment.earliest, earliest > bound { break }
            for stored in try store.fixes(ofRun: runID, from: segment.first, limit: segment.stored)
            where Self.selects(stored, selection) {
                let key = Key(stored)
                if let after, key <= after { continue }
                if let bound, key >= bound { continue }
                page.append(stored)
            }
            if page.count >= limit {
                // Keep the `limit` earliest: later segments need only beat the last of them.
                page.sort { Key($0) < Key($1) }
                page.removeLast(page.count - limit)
                bound = page.last.map(Key.init)
            }
        }
        page.sort { Key($0) < Key($1) }
        if let last = page.last { position = Key(last) }
        delivered += page.count
        if page.count < limit { isExhausted = true }
        return page
    }

    /// True when `stored` belongs in a timeline of `selection`. A fix without a time (NaN) has no place in
    /// time order and is never measured: it is left out.
    static func selects(_ stored: StoredFix, _ selection: Selection) -> Bool {
        guard !stored.fix.timestamp.isNaN else { return false }
        switch selection {
        case .measured: return stored.rejection != .outOfOrder && stored.rejection != .future
        case .accepted: return stored.isAccepted
        }
    }

    /// Neighbouring segments merged two by two (the last alone when their number is odd).
    private static func mergingPairs(_ segments: [Segment]) -> [Segment] {
        stride(from: 0, to: segments.count, by: 2).map { index in
            index + 1 < segments.count ? segments[index].merged(with: segments[index + 1]) : segments[index]
        }
    }
}
