import Foundation

/// The user's locale as the shell says it.
///
/// On Linux, Foundation's `Locale.current` is `en_001` ("English, world") whatever `LANG` says, so a US user
/// would get kilometres. There the POSIX variables decide, in their own order of precedence for measurement:
/// `LC_ALL`, then `LC_MEASUREMENT`, then `LANG`. Apple platforms keep `Locale.current`, which follows the
/// user's settings.
extension RunFormatter {
    /// The locale `RunFormatter()` uses: from the environment on Linux (see above), else `Locale.current`.
    public static var userLocale: Locale {
        #if os(Linux)
        return locale(fromEnvironment: ProcessInfo.processInfo.environment) ?? .current
        #else
        return .current
        #endif
    }

    /// The locale the first set POSIX locale variable names — `LC_ALL`, `LC_MEASUREMENT`, `LANG` — with its
    /// codeset and modifier dropped (`en_US.UTF-8` is `en_US`); nil when none is set or it names the `C` or
    /// `POSIX` locale (which say nothing about units).
    public static func locale(fromEnvironment environment: [String: String]) -> Locale? {
        guard let value = ["LC_ALL", "LC_MEASUREMENT", "LANG"].lazy.compactMap({ environment[$0] })
            .first(where: { !$0.isEmpty }) else { return nil }
        let name = value.prefix { $0 != "." && $0 != "@" }
        guard !name.isEmpty, name != "C", name != "POSIX" else { return nil }
        return Locale(identifier: String(name))
    }
}
