import HTTP
import RunCore
import WebAssets

/// Everything `moonrunner serve` can be told, with the defaults it uses. Each field is a flag of `serve`.
public struct ServerConfiguration: Sendable {
    /// Address to listen on. Default `127.0.0.1`.
    public var host = "127.0.0.1"
    /// TCP port; 0 picks an ephemeral port (tests). Default 4242.
    public var port: UInt16 = 4242
    /// Most line-protocol connections open at once; a connection past it gets `err:busy` and is closed.
    /// Default 20,000. With ``maximumHTTPConnections`` it is fitted within the process's open-file limit at
    /// start (when both do not fit the larger is lowered first, and the log says so: see ``ConnectionBudget``).
    public var maximumConnections = 20_000
    /// Most connections open at once from one source address, line protocol and HTTP counted together (one
    /// venue's NAT, or one client gone wrong); the next gets `err:busy` or 503 and is closed, and the address's
    /// other connections go on. Nil: no cap. Default 256: a venue's wifi behind one address, each phone with a
    /// connection or two and each browser a few.
    public var maximumConnectionsPerAddress: Int? = 256
    /// Most connections of both kinds together; nil for none. Set at start when the two limits do not fit in
    /// the open-file limit (see ``ConnectionBudget``).
    public var maximumTotalConnections: Int?
    /// Whether that cap counts loopback connections (127.0.0.0/8, ::1) too. Default false: behind a reverse
    /// proxy on the same machine every client comes from loopback, and so does a load test.
    public var capsLoopbackPerAddress = false
    /// Seconds a new connection may stay silent (no valid command) before it is closed with `err:idle`. Default 30.
    public var idleTimeout: Double = 30
    /// Sustained lines per second one connection may send; past it the server stops reading from that
    /// connection until the budget refills (TCP back-pressure), so nothing is lost. Default 20,000/s.
    public var linesPerSecond: Double = 20_000
    /// Lines one connection may send at once before the rate applies, so a runner can resend a backlog of
    /// thousands of fixes after a reconnect. Default 50,000.
    public var lineBurst: Double = 50_000
    /// Error replies one connection may earn in one second before it is told `err:flood` and closed. Default 200.
    public var errorsPerSecond = 200
    /// Pending output bytes above which a connection's pending `pace:` lines are conflated per runner. Default 64 KiB.
    public var outputHighWaterMark = 64 * 1024
    /// Pending output bytes above which a connection is closed as too slow (never a runner's own: see
    /// ``stalledRunnerTimeout``). Default 4 MiB.
    public var outputHardLimit = 4 * 1024 * 1024
    /// Pending output bytes over all connections together, TCP and HTTP (event streams, exports) alike: past it,
    /// once a second, the connections furthest behind (oldest backlog first) are closed until it fits again,
    /// never a runner's own. With several loops each has an equal share. Default 256 MiB.
    public var outputBudget = 256 * 1024 * 1024
    /// Bytes written to one connection per loop turn, so one fast reader cannot starve the others. Default 256 KiB.
    public var writeBytesPerTurn = 256 * 1024
    /// Seconds a disconnected runner's run stays open for a reconnect with the key. Default 600 (10 minutes).
    public var resumeWindow: Double = 600
    /// The engine's filter, smoothing and pace settings.
    public var tracker = TrackerConfiguration()
    /// How runners are matched to their course (`course:`): off-course distance and hold, the search window.
    public var course = CourseConfiguration()
    /// A race's course (`serve --course NAME`): every run follows it unless its runner chose another
    /// (`course:NAME`) or none (`course:off`). Nil: runs follow a course only when their runner asks.
    public var raceCourse: Course?
    /// Longest command line in bytes, newline excluded. Default 4096.
    public var maximumLineLength = 4096
    /// Most runners one connection may follow by name with `watch:`/`coach:` (`*` follows everyone). Default 1,000.
    public var maximumFollowedRunners = 1_000
    /// Most runs one `runs:` answer lists. Default 100.
    public var maximumHistoryPage = 100
    /// Seconds a runner's current pace must stay off its goal's target pace before coaches get
    /// `alert: kind=off_pace`. Default 60.
    public var offPaceHold: Double = 60
    /// Places of the leaderboard that `rank:` events follow and `leaders:` lists. Default 100.
    public var leaderboardPlaces = 100
    /// Store reads queued off one loop at once (history commands, name lookups, pages' API answers, a late
    /// joiner's snapshot); past it a history command is answered `err:busy`, an API request 503, and a stream
    /// opens without its snapshot, so a crowd asking for history cannot pile reads (and the answers they will
    /// hold) up behind a slow disk. Not a flag. Default 256.
    public var maximumQueuedReads = 256
    /// Replays (`replay:`) going at once on a loop (each holds at most two pages of a saved run's fixes).
    /// Default 100.
    public var maximumReplays = 100
    /// Fixes a replay reads from the store at once (it holds two pages at most, so its memory does not grow
    /// with the run's length). Not a flag: tests make it small. Default 1,000 (some 70 KB).
    var replayPageSize = 1_000

    /// HTTP port for the web page, its event stream and JSON API, on the same loop and host; nil turns HTTP
    /// off; 0 picks an ephemeral port (tests). Default 8080.
    public var httpPort: UInt16? = 8080
    /// The street map under the pages' tracks: Leaflet's files (none by default: `moonrunner serve` reads
    /// Debian's, or `--leaflet DIR`) and the tile server; without Leaflet the pages draw SVG.
    public var streetMap = StreetMapConfiguration()
    /// Limits on one HTTP request: head 8 KiB (431 past it), body 16 KiB (413), 100 header fields; the phone
    /// apps' `/osmand` and `/owntracks` take bodies up to ``ServerConfiguration/deviceBatchBytes``.
    public var httpLimits = HTTPLimits(bodyAllowances: ["/osmand": Self.deviceBatchBytes, "/owntracks": Self.deviceBatchBytes])
    /// The largest body `/osmand` and `/owntracks` take by default: 1 MiB, a 1,000-position queue in the
    /// wordiest form (the background-geolocation library's, ~500 bytes a position) with room to spare.
    public static let deviceBatchBytes = 1 << 20
    /// Seconds a client may take to send a whole request once it started one (408 and close). Default 10.
    public var httpHeaderTimeout: Double = 10
    /// Seconds a keep-alive HTTP connection may stay idle between requests before it is closed. Default 60.
    public var httpIdleTimeout: Double = 60
    /// Most HTTP connections open at once, event streams included; the next gets 503 and is closed.
    /// Default 20,000 (fitted within the open-file limit with ``maximumConnections``).
    public var maximumHTTPConnections = 20_000
    /// Seconds between comment heartbeats on an idle event stream (proxies drop silent ones). Default 15.
    public var eventStreamHeartbeat: Double = 15
    /// Events kept per runner so an event stream that reconnects with `Last-Event-ID` gets what it missed.
    /// Default 32: at 1 fix/s about half a minute away, the usual network blip; a stream away longer starts
    /// afresh from the snapshot, which restores the whole page. (128 cost 35 KB per live runner: 70 MB at
    /// 2,000 runners.)
    public var eventBacklog = 32

    /// Seconds without a position after which a run fed by a phone app over HTTP ends (saved): the apps never
    /// say a run ended. Default 600.
    public var deviceIdle: Double = 600
    /// A fix received more than this many seconds after it was taken is catching up on a backlog (a phone that
    /// was offline sending its queue): spectators see it move the marker and the distance, but its `pace:` has
    /// no current pace (`cur=`), it raises no off-pace alert, and the board takes the run once the burst is
    /// over. Default 30.
    public var catchUpAge: Double = 30
    /// How far ahead of the server's clock a phone app's position may be, in seconds; further is filtered
    /// `future`. Phones stamp positions with GPS time, so more than clock skew is a broken stamp, and one
    /// accepted hours ahead would make every real position after it late. Default 600 (`loc:` allows 24 h,
    /// for fast replays).
    public var deviceFutureAllowance: Double = 600
    /// Wrong device tokens, runner keys and share tokens one source address (or one runner's name) may get per
    /// minute before their answers slow down; past five times it the address is refused for the rest of the
    /// minute (HTTP 429; on the line protocol `err:wrong_key` and close). A connection is closed after this many
    /// wrong keys and share tokens. A right key or token is always taken. Default 20.
    public var deviceFailuresPerMinute = 20
    /// Cheers (`msg:`, the page's cheer button) one connection may send a second; five seconds' worth may come
    /// at once. Past it: `err:busy` (HTTP 429). Default 1.
    public var cheersPerSecond = 1.0
    /// Cheers from one source address a second, all its connections together (a venue's Wi-Fi is one
    /// address). Default 10.
    public var cheersPerSecondPerAddress = 10.0
    /// Cheers one runner gets a second, from everyone together; past it a cheer skips the runner (`err:busy`
    /// when it reaches nobody). Default 5.
    public var cheersPerSecondPerRunner = 5.0
    /// Seconds a runner's own connection (with a run going) may take none of its output while more than
    /// ``outputHardLimit`` waits for it before it is closed (its run goes on, as after any disconnect); it is
    /// closed at once at four times the limit. A spectator is closed at the hard limit at once. Default 60.
    public var stalledRunnerTimeout = 60.0

    /// Lines one connection may have handled per loop turn; the rest wait for its next turn, after every other
    /// connection's, so one runner's flood cannot hold the others up. Default 256.
    public var linesPerTurn = 256
    /// Lines one loop handles in one turn over all its connections; a connection reached past it waits for the
    /// next turn, in arrival order. Queued connections may take three quarters of it, so connections that
    /// just became readable (a newcomer's `ping:`) always find room. It bounds what one turn makes: the events
    /// relayed to the other loops, the output queued, the time before the loop looks at new sockets again.
    /// Default 4,096 (some 20 ms of fixes on one core: a newcomer waits a turn or two).
    public var linesPerLoopTurn = 4_096
    /// Bytes read ahead of what a connection had handled; no read takes more, and past it the server stops
    /// reading from it (TCP pushes back on the sender). Default 16 KiB: about a turn's share of a flood's lines
    /// (256 lines of 45-60 bytes), so a flood waits in the kernel, not in the server's memory, and a fix read is
    /// handled within a turn or two (64 KiB held 1,000-odd fixes per runner besides the kernel's: under the
    /// 500-runner flood events came ~4 s later, p50 12-14 s against 8-10 s, at the same throughput).
    /// At least ``maximumLineLength``: a line's start filling it would never be read to its end.
    public var readAhead = 16 * 1024
    /// The kernel's receive buffer for each line-protocol connection (`SO_RCVBUF`), nil for the kernel's own
    /// automatic sizing (which grows to many megabytes under a flood: seconds of fixes waiting unread, out of
    /// the server's sight and late by the time they are read). Default 32 KiB: at 100 ms of round trip still
    /// hundreds of kilobytes a second per connection, far above a phone's resend of its backlog.
    public var socketReceiveBuffer: Int? = 32 * 1024
    /// Writes waiting for the store above which the server stops reading from every connection until they
    /// fall below ``storeQueueLowWater`` (so memory is bounded when the disk is slower than the runners).
    /// Default 50,000: a quarter of a second of a flood at this machine's pace, plenty for the writer's next
    /// batches, while each write waiting costs memory (200,000 of them put a 2,000-runner long race ~28 MiB
    /// higher at the end with no gain in throughput).
    public var storeQueueHighWater = 50_000
    /// See ``storeQueueHighWater``. Default 20,000.
    public var storeQueueLowWater = 20_000
    /// `GET /healthz` answers 503 once writes have waited this many seconds with no batch committed (a locked
    /// database retries without failing, so nothing else would tell). Default 5.
    public var storeStallSeconds: Double = 5
    /// With several loops (``ServerGroup``): events one loop may have waiting from the others before they stop
    /// reading fixes until it has handled all but a quarter of them. Default 65,536.
    public var relayInboxHighWater = 65_536
    /// Seconds between handing the memory freed since to the system (``ProcessLimits/returnFreeMemory()``, on
    /// the first loop): after a flood or a backlog the resident size falls back to what the live runs need.
    /// Nil: never. Default 10.
    public var memoryReturnInterval: Double? = 10

    /// The defaults above.
    public init() {}
}
