/// `moonrunner bench core|store|load|import …`.
func runBenchCommand(arguments: [String]) -> Int32 {
    let benches: [String: ([String]) -> Int32] = [
        "core": runCoreBenchmark,
        "store": runStoreBenchmark,
        "load": runLoadBenchmark,
        "import": runImportBenchmark,
    ]
    guard let name = arguments.first, let bench = benches[name] else {
        print("usage: moonrunner bench core|store|load|import [--help]")
        return arguments.first == "--help" ? 0 : 2
    }
    return bench(Array(arguments.dropFirst()))
}
