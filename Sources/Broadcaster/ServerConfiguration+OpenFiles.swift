import LiveCore
import Reactor
import RunStore

extension ServerConfiguration {
    /// Descriptors kept for everything but client connections in a server of `loops` loops on `store`.
    static func descriptorReserve(loops: Int, store: any RunStore) -> Int {
        ConnectionBudget.baseReserve + ConnectionBudget.perLoopReserve * max(1, loops) + max(0, store.descriptorsNeeded)
    }

    /// This configuration with its two connection limits fitted within the open-file limit, process-wide, so
    /// called once per server (a ``ServerGroup``'s loops share it). The soft limit is raised as far as the
    /// limits and the reserve need (up to the hard limit, or past it as root); if that is still short, both
    /// kinds share what is left (``ConnectionBudget/fit(lineLimit:httpLimit:reserve:available:)``) and the
    /// log says so. HTTP's limit counts only with HTTP on.
    func fittedToOpenFiles(loops: Int, store: any RunStore, log: ServerLog) -> ServerConfiguration {
        let http = httpPort == nil ? 0 : maximumHTTPConnections
        let reserve = Self.descriptorReserve(loops: loops, store: store)
        // Saturating: a limit given as "any number" must not trap.
        func plus(_ a: Int, _ b: Int) -> Int { a.addingReportingOverflow(b).overflow ? .max : a + b }
        let wanted = plus(plus(max(0, maximumConnections), http), reserve)
        let available = ProcessLimits.raiseOpenFileLimit(to: wanted)
        // 0: the limit could not be read; nothing to fit against.
        guard available > 0 else { return self }
        let budget = ConnectionBudget.fit(lineLimit: maximumConnections, httpLimit: http, reserve: reserve,
                                          available: available)
        guard budget.isLowered else { return self }
        var fitted = self
        fitted.maximumConnections = budget.line
        fitted.maximumTotalConnections = budget.total
        var lowered = "--max-connections lowered to \(budget.line)"
        if httpPort != nil {
            fitted.maximumHTTPConnections = budget.http
            lowered += " and --max-http-connections to \(budget.http), both together at most \(budget.total ?? 0)"
        }
        let hard = ProcessLimits.openFileLimits().map { " (hard limit \($0.hard))" } ?? ""
        let asked = httpPort == nil ? "\(maximumConnections) connections"
            : "\(maximumConnections) line + \(http) HTTP connections"
        log.write("open files: \(available) allowed\(hard), short of \(asked) + \(reserve) kept for the store, "
                  + "loops and listeners: \(lowered) (raise the hard limit, ulimit -Hn, to keep them)")
        return fitted
    }
}
