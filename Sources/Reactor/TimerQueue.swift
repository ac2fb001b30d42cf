/// The loop's timers: a binary min-heap of deadlines plus a table of live timers.
///
/// Cancelling removes the table entry only; its heap node becomes stale and is skipped when it
/// reaches the top (lazy deletion keeps `cancel` O(1)). The heap is rebuilt if stale nodes pile up.
/// Owned by an ``EventLoop`` and touched on its loop thread only.
struct TimerQueue {
    /// A live timer.
    struct Timer {
        var deadline: UInt64
        /// Nanoseconds between firings; `nil` for a one-shot timer.
        let interval: UInt64?
        let body: () -> Void
    }

    /// A heap node; stale unless `timers[id]?.deadline == deadline`.
    struct Node {
        let deadline: UInt64
        let id: UInt64
    }

    private(set) var timers: [UInt64: Timer] = [:]
    private var heap: [Node] = []
    private var lastID: UInt64 = 0

    /// Adds a timer first due at `deadline` (monotonic nanoseconds).
    mutating func add(deadline: UInt64, interval: UInt64?, body: @escaping () -> Void) -> TimerID {
        lastID += 1
        timers[lastID] = Timer(deadline: deadline, interval: interval, body: body)
        push(Node(deadline: deadline, id: lastID))
        return TimerID(rawValue: lastID)
    }

    /// Forgets a timer; harmless if it already fired (one-shot) or was cancelled.
    mutating func cancel(_ id: TimerID) {
        guard timers.removeValue(forKey: id.rawValue) != nil else { return }
        if heap.count > 64, heap.count > 4 * timers.count { rebuildHeap() }
    }

    /// The `epoll_wait` timeout: -1 with no timers, else milliseconds to the next deadline, rounded up
    /// so the loop never wakes a hair early and spins.
    mutating func timeoutMilliseconds(now: UInt64) -> Int32 {
        dropStaleTop()
        guard let next = heap.first else { return -1 }
        if next.deadline <= now { return 0 }
        let milliseconds = (next.deadline - now + 999_999) / 1_000_000
        return Int32(clamping: milliseconds)
    }

    /// Removes and returns the ids of timers due at `now`, earliest first. Firing is left to the
    /// caller (see `takeBody`) because a body may schedule or cancel timers on this very queue.
    mutating func popExpired(now: UInt64) -> [UInt64] {
        var due: [UInt64] = []
        while true {
            dropStaleTop()
            guard let top = heap.first, top.deadline <= now else { return due }
            popTop()
            due.append(top.id)
        }
    }

    /// The body of a due timer, or `nil` if an earlier body cancelled it. One-shot timers are
    /// removed; repeating ones are re-armed one interval after their previous deadline (or after
    /// `now` if the loop fell behind, so missed ticks are skipped rather than replayed in a burst).
    mutating func takeBody(of id: UInt64, now: UInt64) -> (() -> Void)? {
        guard var timer = timers[id] else { return nil }
        guard let interval = timer.interval else {
            timers[id] = nil
            return timer.body
        }
        var next = timer.deadline &+ interval
        if next <= now { next = now &+ interval }
        timer.deadline = next
        timers[id] = timer
        push(Node(deadline: next, id: id))
        return timer.body
    }

    // MARK: Heap

    private func isLive(_ node: Node) -> Bool {
        timers[node.id]?.deadline == node.deadline
    }

    private mutating func dropStaleTop() {
        while let top = heap.first, !isLive(top) { popTop() }
    }

    private mutating func rebuildHeap() {
        heap.removeAll(keepingCapacity: true)
        for (id, timer) in timers { push(Node(deadline: timer.deadline, id: id)) }
    }

    private mutating func push(_ node: Node) {
        heap.append(node)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            if heap[parent].deadline <= heap[child].deadline { break }
            heap.swapAt(parent, child)
            child = parent
        }
    }

    private mutating func popTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count, heap[right].deadline < heap[smallest].deadline { smallest = right }
            if smallest == parent { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
