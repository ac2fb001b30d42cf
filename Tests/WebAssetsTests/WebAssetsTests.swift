import Testing
@testable import WebAssets
