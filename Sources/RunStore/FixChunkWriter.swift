import CSQLite
import RunCore

/// Writes fixes into `fix_chunks` rows (see ``FixChunkCoding``) on the writer thread, inside the batch's
/// transaction. A row holds fixes of one run with consecutive sequences, `first_sequence` to
/// `first_sequence + count - 1`, in at most `textLimit` bytes of text (so the row stays inside its B-tree page);
/// rows of one run never overlap.
///
/// Rows are only ever inserted whole, never grown in place: SQLite rewrites a growing row, and a page of
/// growing rows is rebalanced again and again (twice the cost of inserting, measured). A run's fixes of a batch
/// go into full rows, and what is left over into a small row; small rows of a run share their base time (its
/// open ``Group``), so once they would make a full row, they and the next fixes are joined into one by
/// concatenating their texts (one read, one delete, one insert for some 15 fixes). A run at 1 fix a second
/// thus costs a small insert a fix and its share of a join (about 1.5 times the CPU of the old row-per-fix
/// insert, measured with one fix per run per batch); a busy run costs a few inserts a batch, its lone small
/// row left over from the last batch staying as it is. Either way the run ends up in full rows.
///
/// The writer remembers each run's last sequence and open group (``Tail``) from the batches it committed, so it
/// need not look them up; what a batch learns is kept only once it commits (``didCommit()``), and a group
/// that is not as remembered when it is joined (rows changed behind the writer's back) is looked up afresh. A
/// fix whose sequence is already stored replaces it (as the row-per-fix table's `INSERT OR REPLACE` did): the
/// rows it touches are read, merged and written again.
final class FixChunkWriter {
    /// A run's trailing small rows, all with the same base time, to be joined into one row.
    struct Group: Equatable {
        var first: Int64
        var count: Int
        var rows: Int
        /// The rows' text lengths, summed.
        var bytes: Int
        var base: Int64
        /// The length of one row holding them all.
        var joinedLength: Int { bytes - rows + 1 }
    }

    /// What the writer knows of a run's stored fixes.
    struct Tail: Equatable {
        /// The last sequence stored.
        var end: Int64
        /// Its open group, nil when its last row is full.
        var group: Group?
    }

    /// The most text in one row (see ``FixChunkCoding/textLimit(pageSize:)``).
    let textLimit: Int
    /// A row at least this long is full: it opens no group.
    let fullLength: Int
    /// Runs remembered at most (the memory is cleared past it; it is only a shortcut).
    static let rememberedRuns = 100_000
    private let lastChunk: Statement
    private let insertChunk: Statement
    private let groupChunks: Statement
    private let deleteGroup: Statement
    private let overlappingChunks: Statement
    private let deleteChunk: Statement
    /// Reused text buffers: the batch's fixes, and a joined row.
    private let text = ChunkText()
    private let joined = ChunkText()
    /// Each run's tail after the committed batches.
    private var tails: [Int64: Tail] = [:]
    /// What this batch changed of `tails` (nil: forget the run).
    private var staged: [Int64: Tail?] = [:]

    init(database: Database, textLimit: Int? = nil) throws(StoreError) {
        let pageSize = Int(try database.integer("PRAGMA page_size") ?? 4096)
        self.textLimit = textLimit ?? FixChunkCoding.textLimit(pageSize: pageSize)
        fullLength = self.textLimit * 3 / 4
        lastChunk = try database.prepare("""
            SELECT first_sequence, count, base_time, length(fixes) FROM fix_chunks WHERE run = ?1
            ORDER BY first_sequence DESC LIMIT 1
            """)
        insertChunk = try Self.prepareChunkInsert(on: database)
        groupChunks = try database.prepare("""
            SELECT first_sequence, count, base_time, fixes FROM fix_chunks WHERE run = ?1 AND first_sequence >= ?2
            ORDER BY first_sequence
            """)
        deleteGroup = try database.prepare("DELETE FROM fix_chunks WHERE run = ?1 AND first_sequence >= ?2")
        overlappingChunks = try database.prepare("""
            SELECT first_sequence, count, base_time, fixes FROM fix_chunks
            WHERE run = ?1 AND first_sequence <= ?3 AND first_sequence + count > ?2 ORDER BY first_sequence
            """)
        deleteChunk = try database.prepare("DELETE FROM fix_chunks WHERE run = ?1 AND first_sequence = ?2")
    }

    /// The batch committed: what it learned about runs holds from now on.
    func didCommit() {
        for (run, tail) in staged {
            if let tail { tails[run] = tail } else { tails[run] = nil }
        }
        staged.removeAll(keepingCapacity: true)
        if tails.count > Self.rememberedRuns { tails.removeAll() }
    }

    /// The batch rolled back: forget what it learned.
    func didRollBack() {
        staged.removeAll(keepingCapacity: true)
    }

    /// Stops remembering a run (it ended).
    func forget(run: Int64) {
        staged[run] = .some(nil)
    }

    /// Stores one run's fixes of a batch, given in submission order (a later fix with the same sequence wins).
    func write(run: Int64, _ submitted: [StoredFix]) throws(StoreError) {
        guard !submitted.isEmpty else { return }
        let fixes = Self.normalized(submitted)
        var remembered: Tail?
        if let entry = staged[run] { remembered = entry } else { remembered = tails[run] }
        if let tail = remembered, try write(run: run, fixes, after: tail) { return }
        // Not remembered, or its group was not as remembered: look the run's last row up.
        if let tail = try lookUpLast(of: run) {
            if try !write(run: run, fixes, after: tail) {
                // The last row will not join (its text edited by hand, say): leave it as it is.
                _ = try write(run: run, fixes, after: Tail(end: tail.end, group: nil))
            }
        } else {
            staged[run] = .some(try insert(run: run, fixes, from: 0))
        }
    }

    /// Writes `fixes` given what is stored of the run; false when its group is not as given (nothing is
    /// written then).
    private func write(run: Int64, _ fixes: [StoredFix], after tail: Tail) throws(StoreError) -> Bool {
        if fixes[0].sequence <= tail.end {
            try merge(run: run, fixes)
            staged[run] = .some(nil)  // the merge may have rewritten the last rows: look them up next time
            return true
        }
        var start = 0
        if var group = tail.group, fixes[0].sequence == tail.end &+ 1 {
            // The fixes that fit in one row with the group, at the group's base time.
            text.removeAll()
            text.append(UInt8(ascii: "["))
            let room = textLimit - group.joinedLength + 1  // joined: joinedLength + text.count - 1 bytes
            let taken = fill(fixes, from: 0, base: group.base, budget: room, forcingFirst: false)
            if taken == fixes.count, group.joinedLength + text.count - 1 < fullLength {
                // All of them, and the group is still not full: one more small row.
                try insertRow(run: run, first: fixes[0].sequence, count: taken, base: group.base)
                group.count += taken
                group.rows += 1
                group.bytes += text.count
                staged[run] = Tail(end: fixes[taken - 1].sequence, group: group)
                return true
            }
            // The group is full with these. Small rows are joined into one with them; a lone row is left as
            // it is when more fixes come than it takes (a busy run: they make full rows of their own, and
            // rewriting the lone row would cost more than it saves).
            if group.rows > 1 || taken == fixes.count {
                guard try join(run: run, group, with: taken > 0 ? text : nil, adding: taken) else { return false }
                start = taken
                if start == fixes.count {
                    staged[run] = Tail(end: fixes[start - 1].sequence, group: nil)
                    return true
                }
            }
        }
        staged[run] = .some(try insert(run: run, fixes, from: start))
        return true
    }

    /// The run's last row, from the table, as a tail (a short row opens a group).
    private func lookUpLast(of run: Int64) throws(StoreError) -> Tail? {
        defer { lastChunk.reset() }
        try lastChunk.bind(run, at: 1)
        guard try lastChunk.step() else { return nil }
        let first = lastChunk.int64(at: 0)
        let count = Int(lastChunk.int64(at: 1))
        let length = Int(lastChunk.int64(at: 3))
        let end = first &+ Int64(count) &- 1
        guard length < fullLength else { return Tail(end: end, group: nil) }
        return Tail(end: end, group: Group(first: first, count: count, rows: 1, bytes: length, base: lastChunk.int64(at: 2)))
    }

    /// Replaces the group's rows with one row of their fixes followed by `more` (a row's text of `moreCount`
    /// fixes, same base time, continuing them); false (nothing written) when the rows are not the group.
    private func join(run: Int64, _ group: Group, with more: ChunkText?, adding moreCount: Int) throws(StoreError) -> Bool {
        joined.removeAll()
        joined.append(UInt8(ascii: "["))
        var rows = 0
        var next = group.first
        var matches = true
        do {
            defer { groupChunks.reset() }
            try groupChunks.bind(run, at: 1)
            try groupChunks.bind(group.first, at: 2)
            while try groupChunks.step() {
                let first = groupChunks.int64(at: 0)
                let count = groupChunks.int64(at: 1)
                guard first == next, groupChunks.int64(at: 2) == group.base, rows < group.rows else {
                    matches = false
                    break
                }
                try groupChunks.withTextBytes(at: 3) { (bytes) throws(StoreError) in
                    guard let inner = Self.inner(bytes) else {
                        matches = false
                        return
                    }
                    if rows > 0 { joined.append(UInt8(ascii: ",")) }
                    joined.append(inner)
                }
                rows += 1
                next = first &+ count
            }
        }
        guard matches, rows == group.rows, next == group.first &+ Int64(group.count) else { return false }
        if let more {
            more.withBytes { bytes in
                if let inner = Self.inner(bytes) {
                    joined.append(UInt8(ascii: ","))
                    joined.append(inner)
                }
            }
        }
        let count = group.count + moreCount
        joined.append(UInt8(ascii: "]"))
        try deleteGroup.bind(run, at: 1)
        try deleteGroup.bind(group.first, at: 2)
        try deleteGroup.run()
        try insertChunk.bind(run, at: 1)
        try insertChunk.bind(group.first, at: 2)
        try insertChunk.bind(Int64(count), at: 3)
        try insertChunk.bind(group.base, at: 4)
        try insertChunk.bindText(joined, at: 5)
        try insertChunk.run()
        return true
    }

    /// The text between a row's outer brackets (nil when it is not an array).
    private static func inner(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        var start = 0
        var end = bytes.count
        while start < end, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[start]) { start += 1 }
        while end > start, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[end - 1]) { end -= 1 }
        guard end - start >= 2, bytes[start] == UInt8(ascii: "["), bytes[end - 1] == UInt8(ascii: "]") else { return nil }
        return UnsafeBufferPointer(rebasing: bytes[start + 1..<end - 1])
    }

    /// Sorted by sequence, one fix per sequence (the last submitted). Usually already so: then returned as is.
    static func normalized(_ fixes: [StoredFix]) -> [StoredFix] {
        var increasing = true
        for index in fixes.indices.dropFirst() where fixes[index].sequence <= fixes[index - 1].sequence {
            increasing = false
            break
        }
        if increasing { return fixes }
        // Stable by submission order, so of equal sequences the last submitted comes last and is kept.
        let ordered = fixes.enumerated().sorted { ($0.element.sequence, $0.offset) < ($1.element.sequence, $1.offset) }
        var result: [StoredFix] = []
        result.reserveCapacity(ordered.count)
        for (_, fix) in ordered {
            if let previous = result.last, previous.sequence == fix.sequence {
                result[result.count - 1] = fix
            } else {
                result.append(fix)
            }
        }
        return result
    }

    /// Appends to `text` (a row being written, its opening bracket there) the fixes from `start` that continue
    /// one another and fit in `budget` bytes with the closing bracket, which it adds; returns how many it took.
    /// With `forcingFirst` the first is taken whatever its size.
    private func fill(_ fixes: [StoredFix], from start: Int, base: Int64, budget: Int, forcingFirst: Bool) -> Int {
        var index = start
        while index < fixes.count {
            if index > start, fixes[index - 1].sequence == .max || fixes[index].sequence != fixes[index - 1].sequence + 1 {
                break
            }
            let mark = text.count
            if index > start { text.append(UInt8(ascii: ",")) }
            FixChunkCoding.append(fixes[index], base: base, to: text)
            if !(forcingFirst && index == start) && text.count + 1 > budget {
                text.count = mark
                break
            }
            index += 1
        }
        text.append(UInt8(ascii: "]"))
        return index - start
    }

    /// Inserts `text` as a row.
    private func insertRow(run: Int64, first: Int64, count: Int, base: Int64) throws(StoreError) {
        try Self.insertChunk(text, run: run, first: first, count: count, base: base, with: insertChunk)
    }

    /// The insert of one `fix_chunks` row, for ``insertChunk(_:run:first:count:base:with:)``; the writer and
    /// the migration to chunks write rows alike.
    static func prepareChunkInsert(on database: Database) throws(StoreError) -> Statement {
        try database.prepare(
            "INSERT INTO fix_chunks (run, first_sequence, count, base_time, fixes) VALUES (?1, ?2, ?3, ?4, ?5)")
    }

    /// Inserts `text` as the chunk of `count` fixes of `run` from sequence `first`, times relative to `base`.
    static func insertChunk(_ text: ChunkText, run: Int64, first: Int64, count: Int, base: Int64,
                            with insert: Statement) throws(StoreError) {
        try insert.bind(run, at: 1)
        try insert.bind(first, at: 2)
        try insert.bind(Int64(count), at: 3)
        try insert.bind(base, at: 4)
        try insert.bindText(text, at: 5)
        try insert.run()
    }

    /// New rows for `fixes[start...]` (sorted, above everything stored for the run or replacing what was);
    /// returns the run's tail after them (the last row opens a group when it is short).
    private func insert(run: Int64, _ fixes: [StoredFix], from start: Int) throws(StoreError) -> Tail {
        var index = start
        var group: Group?
        while index < fixes.count {
            let base = FixChunkCoding.baseTime(for: fixes[index])
            text.removeAll()
            text.append(UInt8(ascii: "["))
            let count = fill(fixes, from: index, base: base, budget: textLimit, forcingFirst: true)
            try insertRow(run: run, first: fixes[index].sequence, count: count, base: base)
            group = text.count < fullLength
                ? Group(first: fixes[index].sequence, count: count, rows: 1, bytes: text.count, base: base) : nil
            index += count
        }
        return Tail(end: fixes[fixes.count - 1].sequence, group: group)
    }

    /// The slow path, for fixes at or below the run's stored sequences: the rows they overlap are read and
    /// deleted, and the union (new fixes replacing stored ones of the same sequence) is written as new rows.
    private func merge(run: Int64, _ fixes: [StoredFix]) throws(StoreError) {
        var existing: [StoredFix] = []
        var replacedRows: [Int64] = []
        do {
            defer { overlappingChunks.reset() }
            try overlappingChunks.bind(run, at: 1)
            try overlappingChunks.bind(fixes[0].sequence, at: 2)
            try overlappingChunks.bind(fixes[fixes.count - 1].sequence, at: 3)
            while try overlappingChunks.step() {
                let first = overlappingChunks.int64(at: 0)
                let count = Int(overlappingChunks.int64(at: 1))
                let base = overlappingChunks.int64(at: 2)
                replacedRows.append(first)
                try overlappingChunks.withTextBytes(at: 3) { (bytes) throws(StoreError) in
                    try FixChunkCoding.decode(bytes, run: run, firstSequence: first, count: count, base: base,
                                              into: &existing)
                }
            }
        }
        for first in replacedRows {
            try deleteChunk.bind(run, at: 1)
            try deleteChunk.bind(first, at: 2)
            try deleteChunk.run()
        }
        // Both lists are sorted: merge them, the new fix winning on an equal sequence.
        var merged: [StoredFix] = []
        merged.reserveCapacity(existing.count + fixes.count)
        var old = 0
        var new = 0
        while old < existing.count || new < fixes.count {
            if new == fixes.count || old < existing.count && existing[old].sequence < fixes[new].sequence {
                merged.append(existing[old])
                old += 1
            } else {
                if old < existing.count && existing[old].sequence == fixes[new].sequence { old += 1 }
                merged.append(fixes[new])
                new += 1
            }
        }
        _ = try insert(run: run, merged, from: 0)
    }
}
