#if canImport(Glibc)
import ToolSupport
import Glibc
#endif

// The moonrunner command line: a thin dispatcher to one function per subcommand.

let usage = """
usage: moonrunner COMMAND [OPTIONS]    (moonrunner COMMAND --help for each)

  serve      run the live broadcast server
  simulate   replay a route as one or many runners
  watch      follow a runner (or *) live in the terminal
  coach      badge alerts for a runner (or *), one line each
  runs       a runner's runs as a table
  badges     a runner's badge board
  demo       a server, three simulated runners and a watch view in one go
  export     a saved run as GPX, TCX, GeoJSON or SVG
  import     GPX or TCX files as runs
  course     race courses: add a GPX route, list, remove
"""

let arguments = Array(CommandLine.arguments.dropFirst())
let subcommands: [String: ([String]) -> Int32] = [
    "serve": runServeCommand,
    "export": runExportCommand,
    "import": runImportCommand,
    "simulate": runSimulateCommand,
    "watch": runWatchCommand,
    "coach": runCoachCommand,
    "runs": runRunsCommand,
    "badges": runBadgesCommand,
    "demo": runDemoCommand,
    "course": runCourseCommand,
]
guard let name = arguments.first, let subcommand = subcommands[name] else {
    if let word = arguments.first, !["--help", "-h", "help"].contains(word) {
        printError("moonrunner: unknown command '\(word)'\n\n\(usage)")
        exit(2)
    }
    print(usage)
    exit(0)
}
exit(subcommand(Array(arguments.dropFirst())))
