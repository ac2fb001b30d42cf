import Foundation

/// The user's locale as the shell says it.
///
/// On Linux, Foundation's `Locale.current` is `en_001` ("English, world") whatever `LANG` says, so a US user
/// would get kilometres. So the POSIX variables decide when set, in their order of precedence for
/// measurement: `LC_ALL`, then `LC_MEASUREMENT`, then `LANG`. Without them — an Apple app started from the
/// Finder or the home screen has none — `Locale.current` (the user's settings there) decides.
extension RunFormatter {
    /// The locale `RunFormatter()` uses: the one the environment names (see above), else `Locale.current`.
    public static var userLocale: Locale {
        locale(fromEnvironment: ProcessInfo.processInfo.environment) ?? .current
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
