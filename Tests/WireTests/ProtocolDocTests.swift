import Foundation
import Testing
@testable import Wire

/// protocol.md is the contract: every example in it must parse, and everything Wire knows must be in it.
@Suite struct ProtocolDocTests {
    /// The repository root: this file is Tests/WireTests/ProtocolDocTests.swift.
    static let document: String = {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("protocol.md")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }()

    /// Lines of the fenced `text` blocks.
    static let exampleLines: [String] = {
        var lines: [String] = []
        var inExample = false
        for line in document.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                inExample = !inExample && line == "```text"
                continue
            }
            if inExample { lines.append(String(line)) }
        }
        return lines
    }()

    /// The text of the section whose heading starts with `heading`, up to the next `## ` heading.
    static func section(_ heading: String) -> Substring {
        guard let start = document.range(of: "\n" + heading) else { return "" }
        let rest = document[start.upperBound...]
        guard let end = rest.range(of: "\n## ") else { return rest }
        return rest[..<end.lowerBound]
    }

    static let commandLines = exampleLines.filter { $0.hasPrefix("> ") }.map { String($0.dropFirst(2)) }
    static let eventLines = exampleLines.filter { $0.hasPrefix("< ") }.map { String($0.dropFirst(2)) }

    /// Example commands that the document shows failing on purpose, with the error the next line reports.
    static let failingCommands: [String: ErrorCode] = {
        var expected: [String: ErrorCode] = [:]
        for (index, line) in exampleLines.enumerated() where line.hasPrefix("> ") && index + 1 < exampleLines.count {
            let next = exampleLines[index + 1]
            if next.hasPrefix("< err:"), let event = try? ErrorEvent(line: String(next.dropFirst(2))) {
                expected[String(line.dropFirst(2))] = event.code
            }
        }
        return expected
    }()

    @Test func documentHasExamples() {
        #expect(!Self.document.isEmpty, "protocol.md not found next to Package.swift")
        #expect(Self.commandLines.count >= 30)
        #expect(Self.eventLines.count >= 50)
    }

    @Test func everyExampleCommandParsesOrFailsAsShown() {
        for line in Self.commandLines {
            do {
                let command = try Command.parse(line)
                #expect(try Command.parse(command.line) == command, "\(line)")
                // An example followed by an error the parser would produce must not parse.
                if let code = Self.failingCommands[line] {
                    #expect(!code.isParseError, "\(line) parsed but the doc shows err:\(code.rawValue)")
                }
            } catch {
                #expect(Self.failingCommands[line] == error.code, "\(line): \(error)")
            }
        }
    }

    @Test func everyExampleEventParsesAndIsCanonical() {
        for line in Self.eventLines {
            do {
                let event = try ServerEvent(line: line)
                #expect(event.line == line)
                #expect(try Event.parse(line).line == line)
            } catch {
                Issue.record("\(line): \(error)")
            }
        }
    }

    /// `help:` names every form of a command that the command table of §2 gives (`coach:NAME [TOKEN]`,
    /// `leaders:course=NAME`, …), so an operator reading the help is told no less than the document.
    @Test func everyFormTheTableGivesIsInTheHelp() throws {
        for row in Self.section("## 2. Commands").split(separator: "\n") where row.hasPrefix("| `") {
            let forms = String(row.dropFirst(2).prefix { $0 != "|" }).split(separator: "`", omittingEmptySubsequences: false).enumerated()
                .filter { $0.offset % 2 == 1 }.map(\.element)
            guard let word = forms.first?.prefix(while: { $0 != ":" }),
                  let help = HelpEvent.standard.first(where: { $0.command == String(word) }) else { continue }
            for form in forms where form.hasPrefix(word + ":") {
                #expect(help.text.contains(form), "help:\(word) lacks \(form): \(help.text)")
            }
        }
    }

    @Test func everyCommandWordIsDocumented() {
        for word in Command.words {
            #expect(Self.section("## 2. Commands").contains("| `\(word):"), "command \(word): not in the command table")
            #expect(Self.commandLines.contains { $0.hasPrefix(word + ":") }, "no example of \(word):")
        }
    }

    @Test func everyEventKindIsDocumentedWithAnExample() {
        for kind in ServerEvent.kinds {
            #expect(Self.section("## 3. Events").contains("| `\(kind):"), "event \(kind): not in the event table")
            #expect(Self.eventLines.contains { $0.hasPrefix(kind + ":") }, "no example of \(kind):")
        }
    }

    @Test func everyErrorCodeIsInTheTable() {
        for code in ErrorCode.allCases {
            #expect(Self.section("## 7. Errors").contains("| `\(code.rawValue)` |"), "error \(code.rawValue) not in the table")
        }
    }

    @Test func everyFilterReasonAndTierIsDocumented() {
        for word in RunEndedEvent.filterReasons + BadgeEvent.tiers + RunEndReason.allCases.map(\.rawValue) {
            #expect(Self.document.contains("`\(word)`"), "\(word) not in protocol.md")
        }
    }

    @Test func documentedLimitsMatchTheCode() {
        #expect(Self.document.contains("at most **\(Command.Limits.lineLength) bytes**"))
        #expect(Self.document.contains("1–\(Command.Limits.nameLength) characters"))
        #expect(Self.document.contains("1–\(Command.Limits.keyLength) ASCII letters"))
        #expect(Self.document.contains("1–\(Command.Limits.cheerLength) characters"))
        #expect(Self.document.contains("LIMIT (default \(Command.Limits.defaultRunsLimit), at most \(Command.Limits.maximumRunsLimit))"))
    }
}
