import Foundation
import RunCore
import RunStore

/// libFuzzer entry: GPX/TCX import. `ActivityFile.read` on any bytes throws a `StoreError` or gives activities
/// with no empty segment, and each activity then goes through the engine into a store as `import` does
/// (`RunImport.importActivity`), which may refuse it with a `StoreError` but must not trap.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzActivityFile(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let data else { return 0 }
    let file: ActivityFile
    do { file = try ActivityFile.read(Data(bytes: data, count: count)) } catch { return 0 }
    for activity in file.activities {
        precondition(!activity.segments.contains(where: \.isEmpty), "an empty segment")
        precondition(activity.pointCount == activity.fixes.count, "the point count disagrees with the fixes")
        _ = try? RunImport.importActivity(activity, format: file.format, runner: "fuzz", into: Stores.current(),
                                          now: 1_764_000_000)
    }
    return 0
}

/// A memory store, replaced every few hundred imports so a long run's memory stays flat
/// (each store has a writer thread, too costly to make per input).
private enum Stores {
    nonisolated(unsafe) static var store = MemoryRunStore()
    nonisolated(unsafe) static var uses = 0

    static func current() -> MemoryRunStore {
        uses += 1
        if uses % 500 == 0 { store = MemoryRunStore() }
        return store
    }
}
