// /runs/ID: a saved run from /api/runs/ID.
"use strict";
(async () => {
  const id = MR.pathPart(1);
  const $ = (name) => document.getElementById(name);
  for (const format of ["gpx", "geojson", "svg"]) $(`download-${format}`).href = MR.withToken(`/runs/${id}.${format}`);
  const catalogue = await MR.badges();
  let run;
  try {
    run = await MR.getJSON(`/api/runs/${encodeURIComponent(id)}`);
  } catch (error) {
    $("status").textContent = "no such run";
    return;
  }
  const summary = run.summary;
  document.title = `${summary.runner} · run ${summary.run} · MoonRunner Live`;
  $("runner-name").textContent = summary.runner;
  $("runner-name").href = MR.withToken(`/runners/${encodeURIComponent(summary.runner)}`);
  $("run-date").textContent = new Date(summary.date).toLocaleString();
  $("status").textContent = summary.status;
  $("status").className = `status ${summary.status}`;
  const badgeName = (badgeID) => { const b = MR.badgeByID(catalogue, badgeID); return b ? b.name : badgeID; };

  function render() {
    $("distance").textContent = MR.distance(summary.dist);
    $("elapsed").textContent = MR.duration(summary.time);
    $("moving").textContent = MR.duration(summary.moving);
    $("pace-average").textContent = MR.pace(summary.pace);
    $("filtered").textContent = String(summary.filtered);
    const unit = MR.getUnit();
    $("split-unit").textContent = unit;
    $("splits").tBodies[0].replaceChildren(...run.splits.filter((s) => s.unit === unit).map((split) => {
      const row = MR.element("tr");
      row.append(MR.element("td", {}, String(split.n)), MR.element("td", {}, MR.duration(split.time)),
        MR.element("td", {}, MR.pace(split.pace)));
      return row;
    }));
    $("checkpoints").tBodies[0].replaceChildren(...run.checkpoints.map((checkpoint) => {
      const row = MR.element("tr");
      row.append(MR.element("td", {}, badgeName(checkpoint.from)), MR.element("td", {}, badgeName(checkpoint.to)),
        MR.element("td", {}, MR.duration(checkpoint.time)), MR.element("td", {}, MR.pace(checkpoint.pace)));
      return row;
    }));
    $("badges").replaceChildren(...run.badges.map((badge) => {
      const item = MR.element("li", { class: `tier-${badge.tier}`, "data-badge": badge.id });
      item.append(MR.element("span", { class: "badge-name" }, badge.name),
        MR.element("span", { class: "badge-detail" }, `${badge.tier} · ${MR.distance(badge.dist)} · ${MR.duration(badge.time)}`));
      return item;
    }));
  }
  MR.bindUnitSwitch();
  MR.onUnitChange(render);
  render();
  MR.drawTrack($("track"), run.points, run.badges, { current: false });
})();
