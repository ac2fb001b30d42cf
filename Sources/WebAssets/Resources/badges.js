// /runners/NAME/badges: all 33 badges from /api/runners/NAME/badges, with /api/badges' texts.
"use strict";
(async () => {
  const name = MR.pathPart(1);
  const $ = (id) => document.getElementById(id);
  $("runner-name").textContent = name;
  $("runner-name").href = MR.withToken(`/runners/${encodeURIComponent(name)}`);
  document.title = `${name}'s badges · MoonRunner Live`;
  const catalogue = await MR.badges();
  let board;
  try {
    board = await MR.getJSON(`/api/runners/${encodeURIComponent(name)}/badges`);
  } catch (error) {
    $("next-badge").textContent = "No such runner.";
    return;
  }
  const tierOf = (b) => (b.gold ? "gold" : b.silver ? "silver" : b.earned ? "earned" : "locked");

  function render() {
    const earned = board.badges.filter((b) => b.earned).length;
    $("earned-count").textContent = `${earned} of ${board.badges.length}`;
    const next = board.badges.find((b) => b.id === board.next);
    $("next-badge").textContent = next ? `Next: ${next.name}, ${MR.distance(next.left, 1)} further than the longest run so far`
      : "Every badge won.";
    $("board").replaceChildren(...board.badges.map((badge) => {
      const item = MR.element("li", { class: `tier-${tierOf(badge)}${badge.id === board.next ? " next" : ""}`, "data-badge": badge.id });
      const info = MR.badgeByID(catalogue, badge.id);
      item.appendChild(MR.element("h3", {}, badge.name));
      item.appendChild(MR.element("p", { class: "badge-distance" }, MR.distance(badge.dist, 1)));
      item.appendChild(MR.element("p", { class: "badge-tier" }, tierOf(badge)));
      if (badge.best != null) item.appendChild(MR.element("p", { class: "badge-best" }, `best ${MR.pace(badge.best)}`));
      if (badge.earned && !badge.gold && badge.gold_pace != null) {
        item.appendChild(MR.element("p", { class: "badge-goal" },
          badge.silver ? `gold at ${MR.pace(badge.gold_pace)}` : `silver at ${MR.pace(badge.silver_pace)}`));
      }
      if (info) item.title = info.information;
      return item;
    }));
  }
  MR.bindUnitSwitch();
  MR.onUnitChange(render);
  render();
})();
