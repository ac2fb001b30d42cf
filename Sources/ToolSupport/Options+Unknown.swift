extension Options {
    /// The first option in `arguments` that is none of `values` (options that take a value, which is then
    /// skipped) and none of `switches`, as the user wrote it (`--x`, `-x`; without an `=value`), so that a
    /// command can say `unknown option '--x'` before anything else.
    public static func firstUnknownOption(in arguments: [String], values: Set<String>,
                                   switches: Set<String> = ["help", "h"]) -> String? {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("-"), argument != "-", argument.count > 1 else { continue }
            let written = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            let name = String(written.drop(while: { $0 == "-" }))
            if switches.contains(name) { continue }
            guard values.contains(name) else { return written }
            if !argument.contains("=") { index += 1 }
        }
        return nil
    }
}
