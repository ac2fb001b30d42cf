#if canImport(Glibc)
import Glibc
#endif
import ToolSupport

// moonrunner-bench: the benchmarks, out of the product binary. `moonrunner` is what users run; this is what we
// run to measure it (it starts `moonrunner serve` from the same build folder).

/// `moonrunner-bench core|store|load|import|soak|bus|replays …`.
func runBenchCommand(arguments: [String]) -> Int32 {
    let benches: [String: ([String]) -> Int32] = [
        "core": runCoreBenchmark,
        "store": runStoreBenchmark,
        "load": runLoadBenchmark,
        "import": runImportBenchmark,
        "soak": runSoakBenchmark,
        "bus": runBusBenchmark,
        "replays": runReplaysBenchmark,
    ]
    let usage = "usage: moonrunner-bench core|store|load|import|soak|bus|replays [--help]"
    guard let name = arguments.first, let bench = benches[name] else {
        if let word = arguments.first, !["--help", "-h", "help"].contains(word) {
            printError("moonrunner-bench: unknown benchmark '\(word)'\n\n\(usage)")
            return 2
        }
        print(usage)
        return arguments.isEmpty ? 2 : 0
    }
    return bench(Array(arguments.dropFirst()))
}

exit(runBenchCommand(arguments: Array(CommandLine.arguments.dropFirst())))
