/// The fix filter's rules. Every rule has a documented default.
public struct FilterConfiguration: Sendable, Hashable {
    /// Fixes whose accuracy is at or above this many metres are rejected (the seed app's rule); so are
    /// negative, NaN and infinite accuracies. Default 20.
    public var maximumAccuracy: Double = 20
    /// How far ahead of the clock a fix's timestamp may be, in seconds. Default 24 h, so fast-replayed runs work.
    public var futureAllowance: Double = 86_400
    /// A first fix older than this many seconds against the clock may be a cached position: it is held, not
    /// accepted, and the next fix decides (see ``recordingGap``). After the start fixes are judged by order, not
    /// age, so a backlog resent after a reconnect is accepted. Default 10.
    public var staleStartAge: Double = 10
    /// A held stale first fix begins the run when the next fix is close to it in time (either side, and within
    /// ``maximumSpeed``): within this many seconds, or within half the held fix's age when it arrived. The two
    /// are then one recording sent late, as a phone that was offline sends its queue (its positions are much
    /// closer to each other than to now, however sparse). Otherwise it was a cached position from an earlier
    /// GPS session, as far from the next fix as it was old (counted `stale`), and the next fix is judged as a
    /// first fix. Default 60: phone apps record every 1 to 60 s.
    public var recordingGap: Double = 60
    /// The fastest plausible running speed in m/s; faster implied speeds from the last accepted fix are jumps.
    /// The speed is judged over the time since the last accepted fix (at least 1 s), so one rejected spike
    /// does not make the next good fix look like a jump. Default 12.5.
    public var maximumSpeed: Double = 12.5
    /// When this many consecutive jump-rejected fixes agree with each other (each within `maximumSpeed` of
    /// the one before), the last of them is accepted and the track re-anchors on it: the earlier accepted
    /// fix was the wrong one. The jump itself adds no distance. Default 5.
    public var reanchorCount: Int = 5
    /// A recording gap is a pause when it is at least this many seconds long (and at least
    /// ``pauseGapIntervals`` of the recording's usual interval) and crossed no faster than ``pauseGapSpeed``:
    /// a watch that stops recording while its wearer stands (auto-pause), or a phone app that sends only after
    /// moving some metres. No distance and no moving time are counted across it, as across a
    /// ``RunTracker/pause()``. Default 10.
    public var pauseGap: Double = 10
    /// The fastest straight-line speed across a gap that still makes it a pause, m/s: walking pace. A gap
    /// crossed faster (a tunnel at running pace, a phone that lost its signal) is run and counts. Default 1.5.
    public var pauseGapSpeed: Double = 1.5
    /// A gap is a pause only when it is at least this many times the recording's usual interval (a running
    /// average of the intervals that were not gaps), so an app that records every 15 s while its wearer walks
    /// is not paused at every fix. Default 3.
    public var pauseGapIntervals: Double = 3

    /// Creates the default filter.
    public init() {}
}

/// How a ``RunTracker`` filters, smooths and measures.
public struct TrackerConfiguration: Sendable, Hashable {
    /// The fix filter's rules.
    public var filter = FilterConfiguration()
    /// Seconds of fixed-lag smoothing: live values may change for this long after a fix. Default 10.
    public var smoothingLag: Double = 10
    /// The most fixes the smoothing lag holds. When fixes come faster than this many per ``smoothingLag``
    /// (a replayed backlog, a client sending flat out) the oldest leave the lag early, so each fix costs
    /// bounded work whatever its timestamps. Default 64: phones send one fix a second, a few five.
    public var smoothingLagFixes: Int = 64
    /// The window for the current pace, in seconds. Default 30.
    public var currentPaceWindow: Double = 30
    /// The current pace needs at least this many seconds of moving time after the newest stop in its window
    /// (see ``currentPaceWindow``); until then it is not shown. Default 20: in the first seconds after setting
    /// off the live track is still catching up with the runner (the filter smooths hard at a standstill), so
    /// over 10 s the pace was up to 5 times off; from 20 s it is within 10% (2 m noise, stops of 20 s to 2 min).
    /// Where the track shows the runner setting off from standing (``SettingOffEdge``: a short stop may be
    /// judged moving as a whole under 3 m of noise) the pace waits for a whole window after it instead.
    public var currentPaceMinimum: Double = 20
    /// The Kalman filter's acceleration noise spectral density in m²/s³ at running speeds (from
    /// ``fullNoiseSpeed``): how briskly the runner may change speed or direction. Lower smooths more but cuts
    /// corners. Across a gap between fixes longer than a second it is divided by the gap (a second's worth of
    /// velocity noise per fix: between turns speed and heading wander little), and where the fix says the
    /// runner turned it grows with the square of the gap instead (a corner takes a few seconds, which the
    /// white-acceleration model spreads too thin over sparse fixes); grown on every gap, it let sparse fixes'
    /// noise through unsmoothed. Default 0.5
    /// (tuned on simulated 3–5 m correlated noise at 1 Hz, and independent and correlated noise every 5 s).
    public var accelerationNoise: Double = 0.5
    /// Reported accuracy divided by the per-axis position error (phones report the 68% circle radius,
    /// about 1.5 standard deviations of one axis). Default 1.5.
    public var accuracyRatio: Double = 1.5
    /// The short still/moving gate judges the smoothed displacement across a window of this many seconds
    /// centred on each fix (what is available of it near the newest fix), and across each half of it, taking
    /// the slowest. Default 20. It decides at running
    /// pace; the long horizon (``settlingHorizon``) decides at walking pace and for long stops.
    public var gateWindow: Double = 20
    /// The still/moving gate: a standing runner starts moving when the gate's speed reaches this, m/s.
    /// Default 1.0.
    public var movingSpeed: Double = 1.0
    /// The still/moving gate: a moving runner stops when the gate's speed drops below this, m/s.
    /// Default 0.6.
    public var stillSpeed: Double = 0.6

    /// The long-horizon still/moving decision judges intervals of this many seconds of the final track (see
    /// ``RunTracker``): live values at walking pace may change for this long after the smoothing lag.
    /// Default 60: drift under correlated noise stays within a few metres over a minute, a walker at 0.5 m/s
    /// goes 30 m.
    public var settlingHorizon: Double = 60
    /// An interval of ``settlingHorizon`` whose points all lie within this many error deviations of each
    /// other (judged on its ends, quarters and middle) is a stay: the runner was standing there. A deviation
    /// is the reported accuracy over ``accuracyRatio`` (at least 1 m), so 3 is 12 m for a phone reporting 6 m.
    /// Default 3.
    public var stayDeviations: Double = 3
    /// A point covered by at least this many stays (one interval ends at each fix) is still. Default 10: a
    /// standing runner's drift makes almost every interval a stay, a walk folding back on itself only a few.
    public var stayCover: Int = 10
    /// Where the smoothed track moves at least this fast over the short gate's window and over both its halves
    /// (the half before the point and the half after it), the runner is moving whatever the long horizon says, m/s.
    /// Drift under a standing runner does not reach it, and the half on a stop's side stands still, so a
    /// stop's time starts within a few seconds of where the runner stopped (the whole window's speed alone
    /// counted up to half a window of the stop as moving, more the faster the runner). Where only the whole
    /// window reaches it, the point's length counts and its time does not. Default 0.8.
    public var confidentSpeed: Double = 0.8
    /// Across an interval that is not a stay, a point counts as moving when the short gate says so, or when
    /// its own gate speed is at least this share of the interval's net speed (a short stop between two
    /// stretches of running has none). Default 0.3.
    public var slowConsistency: Double = 0.3
    /// The most points awaiting the long-horizon decision; beyond it the oldest are decided early, so each
    /// fix costs bounded work. Default 400 (a minute of fixes at 5 Hz and more).
    public var settlingFixes: Int = 400
    /// The Kalman filter's acceleration noise at a standstill, m²/s³: at walking speeds the GPS error is a
    /// larger share of each step, so the filter smooths more. It rises with the cube of the filtered speed to
    /// ``accelerationNoise`` at ``fullNoiseSpeed`` (at 1.3 m/s it is about a seventh of it). Default 0.005.
    public var slowAccelerationNoise: Double = 0.005
    /// The filtered speed at and above which the full ``accelerationNoise`` applies, m/s. Default 2.5.
    public var fullNoiseSpeed: Double = 2.5
    /// Whether the tracker keeps the run's whole final track. Default true: ``RunSummary/track`` from
    /// ``RunTracker/finish()`` is then every point of the run, as importers, exports and replays need.
    ///
    /// When false the tracker keeps only the final points the next fixes can still read (the short gate's
    /// window, the current pace's window, the long horizon's interval, the newest final point) and forgets the
    /// older ones, so a live run costs the same memory at hour 4 as at minute 1 (see
    /// ``RunTracker/storedPointCount``). Everything it reports is the same to the last bit — every
    /// ``RunProgress``, and ``RunTracker/finish()``'s distance, elapsed and moving time, splits, checkpoints,
    /// awards and rejections — except that the summary's `track` holds only the newest points (the last
    /// minute or so): a whole track is rebuilt by replaying the run's stored fixes through a tracker that
    /// keeps it. The server's live runs use false.
    public var keepsTrack = true

    /// Creates the default configuration.
    public init() {}

    /// This configuration with ``keepsTrack`` set to `keeps`.
    public func keepingTrack(_ keeps: Bool) -> TrackerConfiguration {
        var configuration = self
        configuration.keepsTrack = keeps
        return configuration
    }
}
