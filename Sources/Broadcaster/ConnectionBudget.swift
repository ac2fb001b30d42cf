/// The two connection limits fitted within the process's open-file limit: every client connection holds a
/// descriptor, so `--max-connections` + `--max-http-connections` + what the rest of the server holds (the
/// reserve) must fit in `RLIMIT_NOFILE`. Otherwise the process runs out of descriptors before either limit is
/// reached, and newcomers on both ports wait unanswered instead of getting `err:busy` or 503.
public struct ConnectionBudget: Sendable, Equatable {
    /// The line-protocol limit to use.
    public var line: Int
    /// The HTTP limit to use.
    public var http: Int
    /// True when the limits asked for did not fit and were lowered.
    public var isLowered: Bool

    /// A budget as given (``fit(lineLimit:httpLimit:reserve:available:)`` makes them).
    public init(line: Int, http: Int, isLowered: Bool) {
        self.line = line
        self.http = http
        self.isLowered = isLowered
    }

    /// Descriptors kept for everything but client connections, before the store's and the loops' own: standard
    /// input and output, the listeners and their spare descriptors, the cluster's Redis connections, a history
    /// read's temporary files, sockets on their way between loops, a newcomer accepted only to be refused.
    public static let baseReserve = 64
    /// Descriptors each event loop holds (its epoll and its wake-up eventfd, the first one's signalfd).
    public static let perLoopReserve = 3

    /// The limits to use when `available` descriptors are allowed and `reserve` of them go to everything else.
    ///
    /// Left as they are when they fit. Otherwise the larger is lowered first, so that neither the runners' line
    /// protocol nor the browsers' and phones' HTTP is starved for the other: a limit within half of what the
    /// reserve leaves keeps its value and the other gets the rest; when both are above half, each gets half.
    /// Every descriptor the reserve leaves is used; with none left, both are 0.
    public static func fit(lineLimit: Int, httpLimit: Int, reserve: Int, available: Int) -> ConnectionBudget {
        let line = max(0, lineLimit)
        let http = max(0, httpLimit)
        let room = max(0, available - max(0, reserve))
        let (total, overflow) = line.addingReportingOverflow(http)
        guard overflow || total > room else { return ConnectionBudget(line: line, http: http, isLowered: false) }
        let half = room / 2
        if line <= half { return ConnectionBudget(line: line, http: room - line, isLowered: true) }
        if http <= room - half { return ConnectionBudget(line: room - http, http: http, isLowered: true) }
        return ConnectionBudget(line: half, http: room - half, isLowered: true)
    }
}
