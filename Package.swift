// swift-tools-version:6.0
import PackageDescription

/// MoonRunner Live: a live run broadcast server, its engine, storage, client library and CLI.
/// Dependencies point one way: RunCore and Wire are pure; RunStore and Reactor do I/O;
/// Broadcaster ties them together; MoonRunnerClient needs only Wire and RunCore.
let package = Package(
    name: "MoonRunner",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "RunCore", targets: ["RunCore"]),
        .library(name: "Wire", targets: ["Wire"]),
        .library(name: "HTTP", targets: ["HTTP"]),
        // For the fuzz package (Fuzz/): the GPX/TCX import target.
        .library(name: "RunStore", targets: ["RunStore"]),
        .library(name: "PostgresRunStore", targets: ["PostgresRunStore"]),
        .library(name: "ClusterBus", targets: ["ClusterBus"]),
        .library(name: "MoonRunnerClient", targets: ["MoonRunnerClient"]),
        .executable(name: "moonrunner", targets: ["moonrunner"]),
    ],
    targets: [
        // The pure engine: filter, smoother, measurements, splits, badges, predictions (no I/O).
        .target(name: "RunCore", resources: [.copy("Resources/badges.json")]),
        // The line protocol: commands and events, parsed and formatted in one place (no I/O).
        .target(name: "Wire"),
        // HTTP/1.1 for the web page: parsing and encoding only, no I/O (Wire only for its calendar).
        .target(name: "HTTP", dependencies: ["Wire"]),
        // The live page's HTML, CSS and JS, served by the server from memory.
        .target(name: "WebAssets", resources: [.copy("Resources")]),
        // Every URL of protocol.md Part 2 decoded into a typed route: the server's handlers get values.
        .target(name: "WebRoutes", dependencies: ["HTTP", "Wire", "WebAssets"]),
        // System libraries: SQLite, libcrypto (SHA-256, keys), epoll and friends (header only), libpq.
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CCrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CEpoll"),
        .systemLibrary(name: "CPostgreSQL", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // The store's contract and its SQLite implementation; exports and imports (GPX, TCX, GeoJSON, SVG).
        // State shared between threads behind one lock (Locked): the compiler checks that it is guarded.
        .target(name: "Locking"),
        .target(name: "RunStore", dependencies: ["RunCore", "Wire", "CSQLite", "CCrypto", "Locking"]),
        // The same RunStore contract on a PostgreSQL server shared by several nodes (`serve --db postgres://…`).
        .target(name: "PostgresRunStore", dependencies: ["RunStore", "RunCore", "CPostgreSQL", "Locking"]),
        // The epoll event loop, sockets and timers: every syscall in one file; LoopBound.
        .target(name: "Reactor", dependencies: ["CEpoll", "Locking"]),
        // The event bus between the nodes of a cluster, on Redis Streams (`serve --cluster redis://…`), and
        // the leases that say which node owns a run. It speaks RESP2 itself on the Reactor's sockets (no C
        // client), so the binary builds and runs with nothing of Redis installed.
        .target(name: "ClusterBus", dependencies: ["Reactor", "Locking"]),
        // The live core, no I/O: the Hub (sessions, runs, who hears what) decides every line and every web
        // request (JSON API, phone apps, page actions, event streams' start) and records its effects (HubEffect)
        // for whoever drives it; the server's configuration. Tested without sockets (Tests/Support/PureServer).
        // Release builds skip the run-time exclusivity checks here and in Broadcaster (the compiler still proves
        // what it can): the hub's and the peers' class properties are touched several times for every fix, and
        // the checks cost ~3% of a flood. Loop-thread-only state is the design (each loop owns its hub); the
        // debug builds and the sanitizer jobs keep the checks. Not products, so packages using the client
        // library never see the flag.
        .target(name: "LiveCore", dependencies: ["RunCore", "Wire", "RunStore", "HTTP", "WebAssets", "WebRoutes"],
                swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]),
        // The server's transport: ServerCore (a loop's connections, framing, HTTP parsing, event stream frames,
        // loops, the cluster relay) carries out the hub's effects; Server is the Sendable handle.
        .target(name: "Broadcaster", dependencies: ["LiveCore", "RunCore", "Wire", "RunStore", "Reactor", "HTTP",
                                                   "WebAssets", "WebRoutes", "ClusterBus"],
                swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]),
        // The client library (delegate and AsyncSequence APIs). On Linux, Foundation has no socket streams: the
        // client's own streams sit on the Reactor's sockets.
        .target(name: "MoonRunnerClient", dependencies: [
            "Wire", "RunCore", "Locking", .target(name: "Reactor", condition: .when(platforms: [.linux])),
        ]),
        // What the command-line programs share: option parsing, messages, file access.
        .target(name: "ToolSupport"),
        // The CLI: a thin dispatcher, one file per subcommand.
        .executableTarget(
            name: "moonrunner",
            dependencies: ["RunCore", "Wire", "RunStore", "PostgresRunStore", "Reactor", "Broadcaster", "WebAssets",
                           "MoonRunnerClient", "ToolSupport", "Locking"]),
        // The benchmarks, in their own executable (not in the product users run).
        .executableTarget(
            name: "moonrunner-bench",
            dependencies: ["RunCore", "Wire", "RunStore", "PostgresRunStore", "Reactor", "ToolSupport", "ClusterBus",
                           "Locking"]),
        // Shared by the network test targets: a line client with deadlines, and server/process fixtures.
        .target(name: "MoonRunnerTestSupport", dependencies: ["Broadcaster", "LiveCore", "Reactor", "RunStore", "PostgresRunStore",
                                                              "Wire", "ClusterBus"],
                path: "Tests/Support"),
        // One test target per library target (and the CLI's), each beside what it tests.
        .testTarget(name: "RunCoreTests", dependencies: ["RunCore"], resources: [.copy("Fixtures")]),
        .testTarget(name: "WireTests", dependencies: ["Wire", "RunCore"]),
        .testTarget(name: "HTTPTests", dependencies: ["HTTP", "Wire"], resources: [.copy("Corpus")]),
        .testTarget(name: "WebAssetsTests", dependencies: ["WebAssets"]),
        .testTarget(name: "WebRoutesTests", dependencies: ["WebRoutes", "HTTP", "Wire", "WebAssets"]),
        .testTarget(name: "RunStoreTests", dependencies: ["RunStore", "PostgresRunStore", "RunCore", "MoonRunnerTestSupport"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "ReactorTests", dependencies: ["Reactor"]),
        .testTarget(name: "LockingTests", dependencies: ["Locking"]),
        .testTarget(name: "ClusterBusTests", dependencies: ["ClusterBus", "MoonRunnerTestSupport"]),
        .testTarget(name: "LiveCoreTests", dependencies: ["LiveCore", "Wire", "RunCore", "RunStore", "HTTP", "WebRoutes", "MoonRunnerTestSupport"]),
        .testTarget(name: "BroadcasterTests", dependencies: ["Broadcaster", "LiveCore", "Wire", "RunCore", "RunStore", "Reactor",
                                                     "WebAssets", "MoonRunnerTestSupport"]),
        .testTarget(name: "MoonRunnerClientTests", dependencies: ["MoonRunnerClient", "Broadcaster", "Wire", "RunCore", "RunStore",
                                                          "Reactor", "MoonRunnerTestSupport"]),
        .testTarget(name: "moonrunnerTests", dependencies: ["moonrunner", "RunStore", "PostgresRunStore", "RunCore", "Wire", "Reactor", "MoonRunnerClient", "MoonRunnerTestSupport"],
                    resources: [.copy("Fixtures")]),
    ],
    swiftLanguageModes: [.v6]
)
