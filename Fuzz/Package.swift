// swift-tools-version:6.0
import Foundation
import PackageDescription

/// libFuzzer targets for MoonRunner's parsers, kept out of the main package: an executable whose `main` is
/// libFuzzer's only links with `-sanitize=fuzzer`, so a plain `swift build` of the main package must not see it.
/// Build with `swift build --package-path Fuzz --sanitize=fuzzer --sanitize=address --product FuzzX`
/// (or `tools/fuzz.sh`), run over `Fuzz/Corpus/<target>/`.
///
/// The main package is a path dependency, so its identity is the name of the checkout's directory (`main`,
/// a worktree's name, CI's clone): read it from where this manifest lives rather than hard-coding it.
let mainPackage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let identity = mainPackage.lastPathComponent

/// One fuzz target: a single file defining `LLVMFuzzerTestOneInput`, parsed as a library (no top-level code).
func fuzzTarget(_ name: String, _ products: [String]) -> Target {
    .executableTarget(
        name: name,
        dependencies: products.map { .product(name: $0, package: identity) },
        swiftSettings: [.unsafeFlags(["-parse-as-library"])])
}

let package = Package(
    name: "MoonRunnerFuzz",
    platforms: [.macOS(.v14)],
    dependencies: [.package(path: "..")],
    targets: [
        fuzzTarget("FuzzCommand", ["Wire"]),
        fuzzTarget("FuzzLineFramer", ["Wire"]),
        fuzzTarget("FuzzServerEvent", ["Wire"]),
        fuzzTarget("FuzzActivityFile", ["RunStore", "RunCore"]),
        fuzzTarget("FuzzHTTPRequest", ["HTTP"]),
        fuzzTarget("FuzzRESPReply", ["ClusterBus"]),
    ],
    swiftLanguageModes: [.v6]
)
