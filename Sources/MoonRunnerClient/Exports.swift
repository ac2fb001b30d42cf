// What the client's public API is made of comes with `import MoonRunnerClient`.
//
// Wire is re-exported whole: its events, codes and limits are the wire contract the API speaks (every
// `ClientEvent` carries one), and giving the client copies of them would mean two types per line kind to keep
// in step with protocol.md. RunCore is the server's engine, so only the few types the API takes or hands out
// are re-exported: a fix, and the badge tier and split unit enums the typed accessors return.
@_exported import Wire
@_exported import struct RunCore.Fix
@_exported import enum RunCore.BadgeTier
@_exported import enum RunCore.SplitUnit
@_exported import struct RunCore.Badge
@_exported import enum RunCore.Badges
