/// The two connection limits fitted within the process's open-file limit: every client connection holds a
/// descriptor, so `--max-connections` + `--max-http-connections` + what the rest of the server holds (the
/// reserve) must fit in `RLIMIT_NOFILE`. Otherwise the process runs out of descriptors before either limit is
/// reached, and newcomers on both ports wait unanswered instead of getting `err:busy` or 503.
public struct ConnectionBudget: Sendable, Equatable {
    /// The line-protocol limit to use.
    public var line: Int
    /// The HTTP limit to use.
    public var http: Int
    /// The limit of both kinds together, nil when the two limits fit as they are.
    public var total: Int?
    /// True when the limits asked for did not fit and were lowered.
    public var isLowered: Bool { total != nil }

    /// A budget as given (``fit(lineLimit:httpLimit:reserve:available:)`` makes them).
    public init(line: Int, http: Int, total: Int?) {
        self.line = line
        self.http = http
        self.total = total
    }

    /// Descriptors kept for everything but client connections, before the store's and the loops' own: standard
    /// input and output, the listeners and their spare descriptors, the cluster's Redis connections, a history
    /// read's temporary files, sockets on their way between loops, a newcomer accepted only to be refused.
    public static let baseReserve = 64
    /// Descriptors each event loop holds (its epoll and its wake-up eventfd, the first one's signalfd).
    public static let perLoopReserve = 3

    /// The limits to use when `available` descriptors are allowed and `reserve` of them go to everything else.
    ///
    /// Left as they are when they fit. Otherwise the descriptors the reserve leaves are one pool for both kinds
    /// (`total`): either may use what the other does not, up to its own limit, except a tenth of the pool (or
    /// the other's whole limit, when smaller) kept for the other, so a flood of idle connections of one kind
    /// never locks the other out: 20,000 runners and spectators on a machine of 20,000 descriptors still fit,
    /// and so does the page's `/healthz` beside 20,000 idle line connections.
    public static func fit(lineLimit: Int, httpLimit: Int, reserve: Int, available: Int) -> ConnectionBudget {
        let line = max(0, lineLimit)
        let http = max(0, httpLimit)
        let room = max(0, available - max(0, reserve))
        let (sum, overflow) = line.addingReportingOverflow(http)
        guard overflow || sum > room else { return ConnectionBudget(line: line, http: http, total: nil) }
        let kept = room / 10
        return ConnectionBudget(line: min(line, room - min(http, kept)), http: min(http, room - min(line, kept)),
                                total: room)
    }
}
