import RunCore
import RunStore

extension Hub {
    /// What the web overview shows: every live run anyone may see, in the leaderboard's order, and the latest
    /// public runs ended.
    package struct Overview {
        /// One live run: its runner, id, place on the board (nil: not ranked yet), course and latest `pace:`.
        package struct Live {
            package let name: String
            package let runID: Int64
            package let position: Int?
            package let course: String?
            package let paceLine: [UInt8]?
        }

        package let live: [Live]
        /// The `end:` lines of the latest public runs ended, newest first.
        package let ended: [[UInt8]]
    }

    /// The overview now.
    package func overview() -> Overview {
        let places = Dictionary(leaderboard.standings(goal: nil, limit: .max).standings.map { ($0.0, $0.1.position) },
                                uniquingKeysWith: { first, _ in first })
        let live = visibleLiveRunnerNames(for: nil).compactMap { name -> Overview.Live? in
            guard let run = liveRun(of: name) else { return nil }
            return Overview.Live(name: name, runID: run.runID, position: places[name],
                                 course: courseProgress(of: name)?.course, paceLine: run.latestPaceLine)
        }.sorted { ($0.position ?? .max, $0.name) < ($1.position ?? .max, $1.name) }
        return Overview(live: live, ended: recentlyEnded.reversed().filter { !isPrivate(Self.subject(of: $0)) })
    }

    /// What the loop knows of a runner's badges and distance, for a JSON answer made off the loop (nil when
    /// not in memory).
    package func standing(of name: String) -> (history: BadgeHistory, distance: Double)? {
        guard let history = runners[name]?.history ?? remoteRuns[name]?.startHistory else { return nil }
        return (history, liveRun(of: name)?.distance ?? 0)
    }

    /// The subject of an event line (`end:NAME …` → NAME).
    package static func subject(of line: [UInt8]) -> String {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return "" }
        return String(decoding: line[(colon + 1)...].prefix { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\n") },
                      as: UTF8.self)
    }
}
