import Foundation
import MoonRunnerClient
import MoonRunnerTestSupport
import RunStore
import Testing

/// Formatting for metric and imperial locales, identical on every platform.
@Suite(.mayBlock) struct FormattingTests {
    static let utc = TimeZone(identifier: "UTC")!

    @Test(arguments: [
        ("de_DE", RunFormatter.DistanceUnit.kilometres, "5,01 km", "5:20 /km"),
        ("fr_FR", .kilometres, "5,01 km", "5:20 /km"),
        ("en_DE", .kilometres, "5,01 km", "5:20 /km"),
        ("en_US", .miles, "3.11 mi", "8:35 /mi"),
        ("en_GB", .miles, "3.11 mi", "8:35 /mi"),
    ])
    func unitsFollowTheLocale(identifier: String, unit: RunFormatter.DistanceUnit, distance: String, pace: String) {
        let formatter = RunFormatter(locale: Locale(identifier: identifier), timeZone: Self.utc)
        #expect(formatter.unit == unit)
        #expect(formatter.distance(5012.35) == distance)
        #expect(formatter.pace(320.1) == pace)
        #expect(formatter.duration(1622.4) == "0:27:02")
    }

    @Test(arguments: [
        (["LANG": "en_US.UTF-8"], "en_US", RunFormatter.DistanceUnit.miles),
        (["LANG": "de_DE.UTF-8"], "de_DE", .kilometres),
        (["LANG": "en_US.UTF-8", "LC_MEASUREMENT": "fr_FR.UTF-8"], "fr_FR", .kilometres),
        (["LANG": "de_DE.UTF-8", "LC_MEASUREMENT": "fr_FR", "LC_ALL": "en_GB.ISO-8859-1"], "en_GB", .miles),
        (["LANG": "en_US.UTF-8", "LC_ALL": ""], "en_US", .miles),
        (["LANG": "de_DE@euro"], "de_DE", .kilometres),
    ])
    func theShellsLocaleVariablesChooseTheUnits(environment: [String: String], identifier: String,
                                                unit: RunFormatter.DistanceUnit) throws {
        let locale = try #require(RunFormatter.locale(fromEnvironment: environment))
        #expect(locale.identifier == identifier)
        #expect(RunFormatter(locale: locale).unit == unit)
    }

    @Test func noLocaleVariableOrTheCLocaleNamesNoLocale() {
        #expect(RunFormatter.locale(fromEnvironment: [:]) == nil)
        #expect(RunFormatter.locale(fromEnvironment: ["LANG": "C.UTF-8"]) == nil)
        #expect(RunFormatter.locale(fromEnvironment: ["LC_ALL": "POSIX", "LANG": "en_US.UTF-8"]) == nil)
    }

    @Test(arguments: [
        (0.0, "0:00:00"), (59.4, "0:00:59"), (59.5, "0:01:00"), (3725, "1:02:05"), (36_000, "10:00:00"),
        (-5, "0:00:00"), (.nan, "0:00:00"),
    ])
    func durationsAreHoursMinutesSeconds(seconds: Double, text: String) {
        #expect(RunFormatter(locale: Locale(identifier: "de_DE")).duration(seconds) == text)
    }

    @Test func durationsMatchFoundationsTimeFormatStyle() {
        let formatter = RunFormatter(locale: Locale(identifier: "en_US"))
        for seconds in [0, 5, 65, 3599, 3600, 3725, 45_296] {
            let foundation = Duration.seconds(seconds).formatted(.time(pattern: .hourMinuteSecond))
            #expect(formatter.duration(Double(seconds)) == foundation)
        }
    }

    @Test func pacesConvertBetweenKilometresAndMiles() {
        let perKilometre = Measurement(value: 300, unit: UnitPace.secondsPerKilometer)
        #expect(abs(perKilometre.converted(to: .secondsPerMile).value - 482.8032) < 1e-9)
        #expect(abs(perKilometre.converted(to: .minutesPerKilometer).value - 5) < 1e-12)
        let perMile = Measurement(value: 8, unit: UnitPace.minutesPerMile)
        #expect(abs(perMile.converted(to: .secondsPerKilometer).value - 298.2582) < 1e-4)
        // Pace is the reciprocal of speed.
        let speed = Measurement(value: 3.6, unit: UnitSpeed.kilometersPerHour)
        #expect(abs((UnitPace.pace(from: speed)?.value ?? 0) - 1000) < 1e-2)  // Foundation: 1 km/h = 0.277778 m/s
        #expect(UnitPace.pace(from: Measurement(value: 0, unit: .metersPerSecond)) == nil)
        #expect(abs((UnitPace.speed(from: perKilometre)?.converted(to: .metersPerSecond).value ?? 0) - 10.0 / 3) < 1e-12)
        let metric = RunFormatter(locale: Locale(identifier: "fr_FR"))
        #expect(metric.pace(nil) == "–:– /km" && metric.paceValue(-1) == "–:–")
        #expect(metric.paceValue(299.5) == "5:00" && metric.paceValue(299.4) == "4:59")
    }

    @Test func datesAreFixedAndInTheTimeZone() {
        let utc = RunFormatter(locale: Locale(identifier: "en_US"), timeZone: Self.utc)
        #expect(utc.date("2024-11-30T07:00:00Z") == "2024-11-30 07:00")
        let paris = RunFormatter(locale: Locale(identifier: "fr_FR"), timeZone: TimeZone(identifier: "Europe/Paris")!)
        #expect(paris.date("2024-11-30T23:30:00Z") == "2024-12-01 00:30")
        #expect(paris.date("yesterday") == "yesterday")
    }

    @Test func explicitUnitsOverrideTheLocale() {
        let formatter = RunFormatter(locale: Locale(identifier: "en_US"), unit: .kilometres)
        #expect(formatter.distance(42_195, decimals: 1) == "42.2 km")
        #expect(RunFormatter(locale: Locale(identifier: "de_DE"), unit: .miles).distance(1609.344) == "1,00 mi")
    }
}

/// The default formatter of a real process follows `LANG`: a US user of `moonrunner runs` gets miles.
@Suite(.mayBlock) struct LocaleFromTheShellTests {
    /// `moonrunner ARGUMENTS` with the locale variables set to `variables` (and the others unset).
    static func moonrunner(_ arguments: [String], _ variables: [String]) throws -> ChildProcess {
        try ChildProcess(executable: "/usr/bin/env",
                         arguments: ["-u", "LC_ALL", "-u", "LC_MEASUREMENT", "-u", "LANG"] + variables
                             + [moonrunnerExecutable.path] + arguments)
    }

    @Test func langChoosesMilesOrKilometres() async throws {
        let store = MemoryRunStore()
        try await withServer(store: store) { server in
            let port = String(server.port)
            let simulate = try Self.moonrunner(["simulate", "--route", "park", "--speed", "3000", "--name", "us",
                                                "--port", port], [])
            #expect(await exitStatus(simulate, timeout: 60) == 0, "\(simulate.standardError)")
            store.flush()
            for (variables, unit) in [(["LANG=en_US.UTF-8"], " /mi"), (["LANG=de_DE.UTF-8"], " /km"),
                                      (["LANG=de_DE.UTF-8", "LC_ALL=en_US.UTF-8"], " /mi")] {
                let runs = try Self.moonrunner(["runs", "us", "--port", port], variables)
                #expect(await exitStatus(runs, timeout: 30) == 0, "\(runs.standardError)")
                let row = runs.standardOutput.split(separator: "\n").last.map(String.init) ?? ""
                #expect(row.hasSuffix(unit), "\(variables): \(row)")
            }
        }
    }
}
