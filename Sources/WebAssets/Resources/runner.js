// /runners/NAME: one runner live. Everything comes from /events?watch=NAME; a `track` event (sent
// first to a late joiner, and again after a reconnect the server could not resume) replaces the state.
"use strict";
(async () => {
  const $ = (id) => document.getElementById(id);
  const name = MR.pathPart(1);
  document.title = `${name} · MoonRunner Live`;
  document.getElementById("runner-name").textContent = name;
  document.getElementById("board-link").href = MR.withToken(`/runners/${encodeURIComponent(name)}/badges`);
  const catalogue = await MR.badges();
  // A page opened with a share token shows a private runner: no map tiles unless the operator allows them.
  const view = await MRMap.create($("map-box"), $("track"),
    { privateRunner: new URLSearchParams(location.search).has("token") });
  const empty = () => ({ runID: null, points: [], badges: [], splits: [], pace: null, ended: null });
  let state = empty();
  let cheers = [];
  // A badge is toasted once per run, even if a reconnect replays it.
  const toasted = new Set();

  function setStatus(text, kind) {
    $("status").textContent = text;
    $("status").className = `status ${kind || ""}`;
  }

  function renderNumbers() {
    const source = state.ended || state.pace;
    $("distance").textContent = source ? MR.distance(source.dist) : "–";
    $("elapsed").textContent = source ? MR.duration(source.time) : "–";
    $("moving").textContent = source ? MR.duration(source.moving) : "–";
    $("pace-average").textContent = source ? MR.pace(source.pace) : "–";
    $("pace-current").textContent = state.pace && !state.ended ? MR.pace(state.pace.cur) : "–";
    // With a goal (goal: on the line protocol), paces carry the predicted finish: total time and time of day.
    const forecast = state.pace && !state.ended && "finish" in state.pace ? state.pace : null;
    $("forecast").hidden = !forecast;
    if (forecast) {
      $("finish").textContent = forecast.finish == null ? "–"
        : `${MR.duration(forecast.finish)} (${new Date(forecast.eta * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })})`;
    }
    const pace = state.pace;
    const next = pace && pace.next ? MR.badgeByID(catalogue, pace.next) : null;
    if (state.ended) {
      $("next-badge").textContent = state.ended.saved ? "Run finished" : "Run discarded";
      $("next-progress").value = 1;
    } else if (pace && pace.next) {
      const label = next ? next.name : pace.next;
      $("next-badge").textContent = `${MR.distance(pace.left, 1)} until ${label}`;
      const previous = MR.badgeBefore(catalogue, pace.next);
      const stretch = next ? next.distance - (previous ? previous.distance : 0) : 0;
      $("next-progress").value = stretch > 0 ? Math.min(1, Math.max(0, 1 - pace.left / stretch)) : 0;
    } else {
      $("next-badge").textContent = pace ? "Every badge won" : "–";
      $("next-progress").value = pace ? 1 : 0;
    }
  }

  function renderBadges() {
    const list = $("badges");
    list.replaceChildren(...state.badges.map((badge) => {
      const item = MR.element("li", { class: `tier-${badge.tier}`, "data-badge": badge.id });
      item.appendChild(MR.element("span", { class: "badge-name" }, badge.name));
      item.appendChild(MR.element("span", { class: "badge-detail" }, `${badge.tier} · ${MR.duration(badge.time)}`));
      return item;
    }));
  }

  function renderSplits() {
    const unit = MR.getUnit();
    $("split-unit").textContent = unit;
    $("splits").tBodies[0].replaceChildren(...state.splits.filter((s) => s.unit === unit).map((split) => {
      const row = MR.element("tr");
      row.appendChild(MR.element("td", {}, String(split.n)));
      row.appendChild(MR.element("td", {}, MR.duration(split.time)));
      row.appendChild(MR.element("td", {}, MR.pace(split.pace)));
      return row;
    }));
  }

  function renderCheers() {
    $("cheers").replaceChildren(...cheers.map((cheer) => {
      const item = MR.element("li");
      item.appendChild(MR.element("span", { class: "from" }, cheer.from));
      item.appendChild(MR.element("span", { class: "text" }, cheer.text));
      return item;
    }));
  }

  // How old the newest position is, in seconds (null: none yet). Positions older than STALE seconds are said
  // to be so, and the marker looks it: a phone without signal, or one sending a backlog.
  const STALE = 15;
  function positionAge() {
    const ts = state.pace ? Number(state.pace.ts) : NaN;
    return isFinite(ts) ? Math.max(0, Date.now() / 1000 - ts) : null;
  }
  function ago(seconds) {
    const s = Math.round(seconds);
    if (s < 90) return `${s} s ago`;
    if (s < 5400) return `${Math.round(s / 60)} min ago`;
    return `${(s / 3600).toFixed(1)} h ago`;
  }
  function clock(unixSeconds) {
    return new Date(unixSeconds * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  }
  // The line under the name: when the run ended, or how long ago the runner was last seen when that is a while.
  function renderLastSeen() {
    const line = $("last-seen");
    const age = positionAge();
    let text = "";
    if (state.ended) {
      // The last position's time, unless the phone's clock runs ahead of ours: then when the end came.
      const last = state.pace ? Number(state.pace.ts) : NaN;
      const at = isFinite(last) ? Math.min(last, state.endedAt || last) : state.endedAt;
      text = `${state.ended.saved ? "Finished" : "Ended"} at ${clock(at)} (${ago(Date.now() / 1000 - at)})`;
    } else if (age != null && age > STALE) {
      text = `Last seen ${ago(age)}`;
    }
    line.textContent = text;
    line.hidden = !text;
    line.classList.toggle("stale", !state.ended && age != null && age > STALE);
    return !state.ended && age != null && age > STALE;
  }
  setInterval(() => {
    const wasStale = $("last-seen").classList.contains("stale");
    if (renderLastSeen() !== wasStale) renderTrack();
  }, 1000);

  // With a privacy zone, positions near the run's ends are withheld (lat and lon null): say why the map has none.
  function renderPrivacyNote() {
    const hidden = state.pace && state.pace.lat == null && !state.ended;
    view.note(!hidden ? "" : state.points.length === 0
      ? "The start is not shown: this runner keeps positions near the start and finish private (a privacy zone). The map begins where the zone ends."
      : "Positions near the finish are private (the runner's privacy zone): the map shows the last one outside it.");
  }

  // --- The runner's course (course:NAME on the line protocol), when it follows one: the course from
  // /api/courses/NAME ({name, length, path, points: [{name, along, lat, lon, passed}]}), where the runner is on
  // it from /api/runners/NAME and then from every pace (along, togo, next_point, next_point_eta, point_etas, eta),
  // and each point's passing time from `point` events. A point's predicted time is the pace's `point_etas` (every
  // point ahead, in order from the next); past its end, the finish's prediction shared out by distance (the
  // server predicts at one pace to the finish).
  let course = null, progress = null, courseLoading = false, courseAskedAt = 0;
  async function loadCourse(known) {
    if (courseLoading) return;
    courseLoading = true;
    courseAskedAt = Date.now();
    try {
      const snapshot = known || await MR.getJSON(`/api/runners/${encodeURIComponent(name)}`);
      const on = snapshot.course;
      if (!on) { course = null; progress = null; return; }
      const shape = course && course.name === on.name ? course : await MR.getJSON(`/api/courses/${encodeURIComponent(on.name)}`);
      course = { name: shape.name, length: shape.length, path: shape.path,
        points: shape.points.map((point, index) => {
          const known = on.points[index] || {};
          return { name: point.name, along: point.along, lat: point.lat, lon: point.lon, passed: known.passed, eta: known.eta };
        }) };
      if (!progress) progress = { along: on.along, togo: on.togo, eta: on.eta, ts: Date.now() / 1000 };
    } catch (error) {
      console.error("course", error);
    } finally {
      courseLoading = false;
      renderCourse();
      renderTrack();
    }
  }
  function pointTime(point) {
    if (point.passed != null) return point.passed;
    if (!progress) return point.eta;
    const etas = progress.point_etas || [];
    const ahead = course.points.indexOf(point) - course.points.filter((p) => p.passed != null).length;
    if (ahead >= 0 && ahead < etas.length && etas[ahead] != null) return etas[ahead];
    if (progress.next_point === point.name && progress.next_point_eta != null) return progress.next_point_eta;
    if (progress.eta != null && progress.togo > 0 && point.along >= progress.along) {
      return progress.ts + (point.along - progress.along) / progress.togo * (progress.eta - progress.ts);
    }
    return point.eta;
  }
  function pointLabel(point) {
    const time = pointTime(point);
    if (point.passed != null) return `${point.name} ✓ ${MR.clock(point.passed)}`;
    return time == null ? point.name : `${point.name} ~${MR.clock(time)}`;
  }
  // What the map draws of the course: its path and its points, labelled with their time.
  function courseDrawing() {
    if (!course) return null;
    return { path: course.path, points: course.points.map((p) => ({ lat: p.lat, lon: p.lon, label: pointLabel(p), passed: p.passed != null, name: p.name })) };
  }
  function renderCourse() {
    $("course-box").hidden = !course;
    $("legend-course").hidden = !course;
    if (!course) return;
    $("course-link").textContent = course.name;
    $("course-link").href = `/courses/${encodeURIComponent(course.name)}`;
    const togo = progress ? progress.togo : null;
    $("togo").textContent = state.ended || togo == null ? "–" : `${MR.distance(togo, 1)} to go`;
    const next = course.points.find((p) => p.passed == null);
    let text = "";
    if (!state.ended && next) {
      const time = pointTime(next);
      text = `Next: ${next.name}${time != null ? ` at ~${MR.clock(time)}` : ""}`;
    } else if (!state.ended && progress && progress.eta != null) {
      text = `Finish at ~${MR.clock(progress.eta)}`;
    }
    $("next-point").textContent = text;
  }

  // Drawing the whole track is cheap but not free: at most once per animation frame. A backlog arriving at
  // once is drawn once, with the marker at its newest position.
  let drawPending = false;
  function renderTrack() {
    if (drawPending) return;
    drawPending = true;
    requestAnimationFrame(() => {
      drawPending = false;
      const age = positionAge();
      view.draw(state.points, state.badges, { current: !state.ended, stale: !state.ended && age != null && age > STALE,
        course: courseDrawing(), along: progress && !state.ended ? progress.along : null });
      renderPrivacyNote();
    });
  }

  function renderAll() {
    renderNumbers(); renderBadges(); renderSplits(); renderCheers(); renderLastSeen(); renderCourse(); renderTrack();
  }

  // What the runner's phone says: an SOS (a banner that stays, with when and where) and its battery. Kept apart
  // from the run's state: a reconnect's track does not make an SOS go away.
  let sos = null;
  function renderSOS() {
    $("sos").hidden = !sos;
    if (!sos) return;
    const at = Number(sos.ts);
    const when = isFinite(at) ? new Date(at * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" }) : sos.ts;
    const where = sos.lat == null ? " (where is withheld: the runner's privacy zone)" : "";
    $("sos-text").textContent = `${name} raised an SOS at ${when}${where}.`;
    $("sos-show").hidden = sos.lat == null;
    $("sos-geo").hidden = sos.lat == null;
    if (sos.lat != null) $("sos-geo").href = `geo:${sos.lat},${sos.lon}`;
  }
  $("sos-show").addEventListener("click", () => {
    if (!sos || sos.lat == null) return;
    if (view.placeSOS) view.placeSOS(sos.lat, sos.lon);
    $("map-box").scrollIntoView({ behavior: "smooth", block: "center" });
  });
  function renderBattery(level, low) {
    $("battery-box").hidden = false;
    $("battery").textContent = `${Math.round(level)} %`;
    $("battery").classList.toggle("low", Boolean(low));
  }

  MR.bindUnitSwitch();
  MR.onUnitChange(() => { renderNumbers(); renderSplits(); renderCourse(); });

  MR.subscribe(`watch=${encodeURIComponent(name)}`, {
    track(track) {
      state = empty();
      state.runID = track.run;
      state.points = track.points.slice();
      state.badges = track.badges.slice();
      state.splits = track.splits.slice();
      cheers = track.cheers.slice().reverse();
      if (track.pace) state.pace = track.pace;
      setStatus("live", "live");
      renderAll();
    },
    run(run) {
      if (run.id !== state.runID) {
        state = empty();
        state.runID = run.id;
        // A new run passes the course's points afresh.
        if (course) { progress = null; loadCourse(); }
        renderAll();
      }
      setStatus("live", "live");
    },
    pace(pace) {
      state.pace = pace;
      // On a course a pace says where along it; one that says nothing has left it (course:off).
      if (pace.along != null) {
        progress = { along: pace.along, togo: pace.togo, next_point: pace.next_point, next_point_eta: pace.next_point_eta,
          point_etas: pace.point_etas, eta: pace.eta, ts: Number(pace.ts) || Date.now() / 1000 };
        if (!course && Date.now() - courseAskedAt > 15000) loadCourse();
      } else if (course) {
        course = null;
        progress = null;
      }
      renderCourse();
      const last = state.points[state.points.length - 1];
      // A privacy zone withholds positions near the run's ends (lat and lon null): nothing to draw then.
      if (pace.lat != null && (!last || pace.time > last[3])) state.points.push([pace.lat, pace.lon, pace.dist, pace.time]);
      renderNumbers();
      renderLastSeen();
      renderTrack();
    },
    badge(badge) {
      if (state.badges.some((b) => b.id === badge.id)) return;
      state.badges.push(badge);
      const info = MR.badgeByID(catalogue, badge.id);
      const key = `${state.runID}:${badge.id}`;
      if (toasted.has(key)) { renderBadges(); renderTrack(); return; }
      toasted.add(key);
      MR.toast(`${badge.name} (${badge.tier})`, info ? info.information : `${name} reached ${badge.name}.`);
      renderBadges();
      renderTrack();
    },
    split(split) {
      if (state.splits.some((s) => s.unit === split.unit && s.n === split.n)) return;
      state.splits.push(split);
      renderSplits();
    },
    end(end) {
      state.ended = end;
      state.endedAt = Date.now() / 1000;
      setStatus(end.saved ? "finished" : "ended", "ended");
      renderAll();
      if (end.saved) {
        const link = MR.element("a", { href: MR.withToken(`/runs/${end.run}`), id: "saved-run" }, "the saved run");
        $("status").append(" · ", link);
      }
    },
    alert(alert) {
      if (alert.batt != null) renderBattery(alert.batt, alert.batt < 15);
      if (alert.alert === "sos") {
        const isNew = !sos || sos.ts !== alert.ts;
        sos = alert;
        renderSOS();
        if (isNew && alert.lat != null && view.placeSOS) view.placeSOS(alert.lat, alert.lon);
      } else if (alert.alert === "battery_low") {
        MR.toast("Phone battery low", `${name}'s phone is at ${Math.round(alert.batt)} %.`);
      }
    },
    point(point) {
      if (!course) return;
      const passed = course.points.find((p) => p.name === point.name && p.passed == null && Math.abs(p.along - point.along) < 1);
      if (!passed) return;
      passed.passed = Number(point.ts);
      // A late joiner is told the passages so far too: only a fresh one is news.
      if (Date.now() / 1000 - passed.passed <= 60) MR.toast(`${point.name} passed`, `${name} passed ${point.name} at ${MR.clock(passed.passed)}, ${MR.duration(point.time)} into the run.`);
      renderCourse();
      renderTrack();
    },
    msg(cheer) {
      cheers.unshift(cheer);
      cheers = cheers.slice(0, 50);
      renderCheers();
    },
  }, (connection) => {
    if (connection !== "live" && !state.ended) setStatus(connection, "offline");
  });

  // Someone who is not running now: say so, and point at the latest run.
  MR.getJSON(`/api/runners/${encodeURIComponent(name)}`).then((snapshot) => {
    if (snapshot.course) loadCourse(snapshot);
    if (!snapshot.live && state.runID == null) {
      setStatus("not running now", "idle");
      if (snapshot.last_run != null) {
        $("status").append(" · ", MR.element("a", { href: MR.withToken(`/runs/${snapshot.last_run}`) }, "latest run"));
      }
    }
  }).catch(() => setStatus("unknown runner", "offline"));

  $("cheer-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = $("cheer-text").value.trim();
    if (!text) return;
    $("cheer-send").disabled = true;
    try {
      const response = await fetch(MR.withToken(`/runners/${encodeURIComponent(name)}/cheers`), {
        method: "POST", body: new URLSearchParams({ text }),
      });
      if (response.status === 202) {
        $("cheer-text").value = "";
        $("cheer-status").textContent = "Sent!";
      } else {
        $("cheer-status").textContent = (await response.text()).trim() || `Not sent (${response.status})`;
      }
    } catch (error) {
      $("cheer-status").textContent = "Not sent: no connection";
    } finally {
      $("cheer-send").disabled = false;
    }
  });
  // --- The runner's own tools: a device token for a phone app, and stopping the run (with the key). ---
  async function withKey(path, fields = {}) {
    const key = $("runner-key").value.trim();
    if (!key) { $("runner-tools-status").textContent = "Give your key first."; return null; }
    const response = await fetch(`/runners/${encodeURIComponent(name)}/${path}`, {
      method: "POST", headers: { Authorization: `Bearer ${key}` }, body: new URLSearchParams(fields),
    });
    return response;
  }
  // The runner's phones (GET with the key): name, app, when it last posted, battery; and a phone whose
  // OwnTracks encrypts its messages, which the server cannot read.
  async function listPhones() {
    const key = $("runner-key").value.trim();
    if (!key) return;
    try {
      const response = await fetch(`/runners/${encodeURIComponent(name)}/devices`, {
        headers: { Authorization: `Bearer ${key}` },
      });
      if (response.status !== 200) return;
      const { devices } = await response.json();
      const list = $("phone-list");
      list.replaceChildren();
      for (const phone of devices) {
        const item = document.createElement("li");
        const parts = [phone.label || `Phone ${phone.id}`];
        if (phone.app) parts.push(phone.app);
        parts.push(phone.seen ? `last position ${ago(Math.max(0, Date.now() / 1000 - phone.seen))}` : "no position yet");
        if (phone.batt !== null && phone.batt !== undefined) parts.push(`battery ${phone.batt}%`);
        item.textContent = parts.join(" · ");
        if (phone.encrypted) {
          const warning = document.createElement("p");
          warning.className = "phone-warning";
          warning.textContent = "This phone sends encrypted OwnTracks messages the server cannot read: in OwnTracks, "
            + "clear Preferences → Connection → Encryption key (secret).";
          item.append(warning);
        }
        list.append(item);
      }
      $("phones").hidden = devices.length === 0;
    } catch (error) {
      // The list is a help, not a must: the tools above still work.
    }
  }
  $("runner-key").addEventListener("change", listPhones);
  // Enter in the key field lists the phones too (the form has no submit button, so the browser would not).
  $("runner-key").addEventListener("keydown", (event) => {
    if (event.key === "Enter") { event.preventDefault(); listPhones(); }
  });
  $("device-make").addEventListener("click", async () => {
    try {
      const label = $("device-label").value.trim();
      const response = await withKey("devices", label ? { label } : {});
      if (!response) return;
      if (response.status !== 201) {
        $("runner-tools-status").textContent = (await response.text()).trim() || `Refused (${response.status})`;
        return;
      }
      const { token } = await response.json();
      const base = `${location.protocol}//${location.host}`;
      $("device-token").textContent = token;
      $("device-url-traccar").textContent = `${base}/osmand`;
      $("device-url-osmand").textContent = `${base}/osmand?id=${token}&lat={0}&lon={1}&timestamp={2}&hdop={3}&altitude={4}&speed={5}`;
      $("device-url-owntracks").textContent = `${base}/owntracks`;
      $("device-user").textContent = name;
      $("device-settings").hidden = false;
      $("runner-tools-status").textContent = "Paste the token into the app.";
      listPhones();
    } catch (error) {
      $("runner-tools-status").textContent = "No connection to the server.";
    }
  });
  // The race course the runner follows (as course: does): its name, or "off" for none.
  $("course-follow").addEventListener("click", async () => {
    try {
      const response = await withKey("course", { course: $("course-choice").value.trim() });
      if (!response) return;
      if (response.status === 200) {
        const answer = await response.json();
        $("runner-tools-status").textContent = answer.course
          ? `Following course ${answer.course}: ${MR.distance(answer.dist)}, ${answer.points} points. Your page shows it from your next position.`
          : "Following no course.";
      } else {
        $("runner-tools-status").textContent = (await response.text()).trim() || `Refused (${response.status})`;
      }
    } catch (error) {
      $("runner-tools-status").textContent = "No connection to the server.";
    }
  });
  $("run-stop").addEventListener("click", async () => {
    try {
      const response = await withKey("stop");
      if (!response) return;
      $("runner-tools-status").textContent = response.status === 200 ? "Run stopped and saved."
        : (await response.text()).trim() || `Refused (${response.status})`;
    } catch (error) {
      $("runner-tools-status").textContent = "No connection to the server.";
    }
  });
})();
