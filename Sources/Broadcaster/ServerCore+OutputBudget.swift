import LiveCore
import Dispatch
import Synchronization

/// Memory for slow clients: bounded per connection (``ServerConfiguration/outputHardLimit``, the HTTP body
/// limits) and in total (``ServerConfiguration/outputBudget``: output not yet written and requests not yet
/// whole). Cheers and paces are dropped or merged for a reader that is behind (``OutputBuffer``); what still
/// piles up is shed here, once a second, client by client, oldest first, and never by closing a runner for
/// its spectators' sake.
extension ServerCore {
    /// A runner's own connection went over the hard limit: watched until it catches up, closed if it stops
    /// reading altogether.
    func watchStalledRunner(_ peer: Peer) {
        if stalledRunners[peer.id] == nil {
            stalledRunners[peer.id] = (peer.output.writtenBytes, Self.now())
            logger.write("runner connection \(peer.id) is slow: \(peer.output.pendingBytes) bytes pending, kept open")
        }
    }

    /// Once a second: the runners' connections over the hard limit that wrote nothing for the stall timeout are
    /// closed (their runs go on, as after any disconnect); those that caught up are no longer watched.
    func closeStalledRunners(now: Double) {
        guard !stalledRunners.isEmpty else { return }
        for (id, seen) in stalledRunners {
            guard let peer = connections[id], peer.state == .open,
                  peer.output.pendingBytes > configuration.outputHardLimit else {
                stalledRunners[id] = nil
                continue
            }
            if peer.output.writtenBytes != seen.written {
                stalledRunners[id] = (peer.output.writtenBytes, now)
            } else if now - seen.since >= configuration.stalledRunnerTimeout {
                stalledRunners[id] = nil
                connectionStatistics.slowClientsClosed += 1
                logger.write("runner connection \(id) read nothing for \(Int(now - seen.since)) s with "
                             + "\(peer.output.pendingBytes) bytes pending, closing")
                closeAtTurnEnd(peer, reason: "stopped reading")
            }
        }
    }

    /// This loop's share of the output budget.
    var outputBudgetShare: Int {
        configuration.outputBudget / max(1, shard?.router.count ?? 1)
    }

    /// Once a second: when this loop's pending output and partial requests are over its share of the budget,
    /// the connections holding memory longest are closed until it fits (runners' own connections are spared).
    /// The total held.
    @discardableResult
    func enforceOutputBudget() -> Int {
        var total = 0
        for peer in connections.values { total += peer.output.pendingBytes + peer.bufferedInputBytes }
        guard total > outputBudgetShare else { return total }
        let behind = connections.values
            .filter { $0.state == .open && $0.heldSince != nil && !hub.isRunnersOwnConnection($0.id) }
            .sorted { ($0.heldSince ?? .infinity, $0.id) < ($1.heldSince ?? .infinity, $1.id) }
        var shed = 0
        for peer in behind where total > outputBudgetShare {
            total -= peer.output.pendingBytes + peer.bufferedInputBytes
            shed += 1
            connectionStatistics.slowClientsClosed += 1
            closeAtTurnEnd(peer, reason: "over the output budget")
        }
        logger.write("pending output over the budget (\(outputBudgetShare) bytes): closed \(shed) connections furthest behind")
        return total
    }
}
