import Foundation

/// A tiny command-line reader: `--name value` options, `--flag` switches and positional arguments.
/// (No ArgumentParser here: the machine fetches no packages.)
public struct Options {
    /// Positional arguments in order.
    public private(set) var positional: [String] = []
    private var values: [String: String] = [:]
    private var switches: Set<String> = []
    /// Options that were given but never asked for (reported as errors).
    private var unread: Set<String> = []
    /// Options given last, without the value they need.
    private var missingValues: Set<String> = []

    /// An error a subcommand prints before exiting with status 2.
    public struct UsageError: Error, CustomStringConvertible {
        /// What was wrong.
        public let description: String

        /// Creates an error.
        public init(description: String) { self.description = description }
    }

    /// Reads `arguments`; `switchNames` are the options that take no value; `optionalValues` may be given
    /// bare (`--noise` alone, or followed by another option) and then read as an empty string.
    public init(_ arguments: [String], switches switchNames: Set<String> = [],
         optionalValues: Set<String> = []) throws(UsageError) {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "-h" || argument == "--help" {
                switches.insert("help")
            } else if argument.hasPrefix("--"), argument.count > 2 {
                var name = String(argument.dropFirst(2))
                if let equals = name.firstIndex(of: "=") {
                    values[String(name[..<equals])] = String(name[name.index(after: equals)...])
                    name = String(name[..<equals])
                } else if switchNames.contains(name) {
                    switches.insert(name)
                } else if optionalValues.contains(name),
                          index + 1 == arguments.count || arguments[index + 1].hasPrefix("--") {
                    values[name] = ""
                } else {
                    index += 1
                    // Judged in finish(): an unknown option is reported as unknown, not as missing its value.
                    if index < arguments.count { values[name] = arguments[index] } else { missingValues.insert(name) }
                }
                unread.insert(name)
            } else if argument.hasPrefix("-"), argument.count == 2, argument != "-" {
                // Short forms: -o FILE.
                index += 1
                guard index < arguments.count else { throw UsageError(description: "\(argument) needs a value") }
                values[String(argument.dropFirst())] = arguments[index]
                unread.insert(String(argument.dropFirst()))
            } else {
                positional.append(argument)
            }
            index += 1
        }
    }

    /// True when `--help` or `-h` was given.
    public var wantsHelp: Bool { switches.contains("help") }

    /// True when the option was given at all (with or without a value).
    public func isPresent(_ name: String) -> Bool {
        values[name] != nil || switches.contains(name)
    }

    /// A switch's presence.
    public mutating func flag(_ name: String) -> Bool {
        unread.remove(name)
        return switches.contains(name)
    }

    /// A string option.
    public mutating func string(_ name: String, alias: String? = nil) -> String? {
        unread.remove(name)
        if let alias { unread.remove(alias) }
        return values[name] ?? alias.flatMap { values[$0] }
    }

    /// A numeric option, or `fallback` when absent (or given bare, for an optional value).
    public mutating func number<T: LosslessStringConvertible>(_ name: String, default fallback: T) throws(UsageError) -> T {
        guard let text = string(name), !text.isEmpty else { return fallback }
        guard let value = T(text) else { throw UsageError(description: "--\(name): not a valid number: \(text)") }
        return value
    }

    /// Fails when an option was given that the subcommand does not know.
    public func finish() throws(UsageError) {
        if let name = unread.sorted().first {
            throw UsageError(description: "unknown option '\(name.count == 1 ? "-" : "--")\(name)'")
        }
        if let name = missingValues.sorted().first {
            throw UsageError(description: "\(name.count == 1 ? "-" : "--")\(name) needs a value")
        }
    }
}

/// Prints to stderr.
public func printError(_ message: String) {
    var standardError = StandardError()
    print(message, to: &standardError)
}

/// stderr as a TextOutputStream.
public struct StandardError: TextOutputStream {
    /// The stream.
    public init() {}

    public mutating func write(_ string: String) {
        FileHandle.standardError.write(Data(string.utf8))
    }
}
