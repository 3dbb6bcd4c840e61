// reel view: the router. The fragment says what is shown, so every view is a URL:
//   #trace=KEY&view=timeline|calls|tools|turns|events|raw|search[&line=N][&name=&q=]
//   #diff=A&with=B          two traces side by side, first drift focused
//   #merge=K1&merge=K2…     several traces in time order
//   (empty)                 what `reel view` was started on: runs, a trace, a diff, a merge

import { h, put, api, fragment, link, num, ms } from "./dom.js";
import { traceView } from "./views.js";
import { diffView, mergeView } from "./views.js";

const main = document.getElementById("main");
const crumbs = document.getElementById("crumbs");
const status = document.getElementById("status");

let home = null;
/** What the current page must stop when the fragment changes (live feeds, timers). */
let teardown = [];

function stopAll() {
  for (const f of teardown) {
    try { f(); } catch { /* already stopped */ }
  }
  teardown = [];
}

/** Shows `msg` where the page says what it is doing. */
export function say(msg) {
  status.textContent = msg || "";
}

async function route() {
  stopAll();
  const f = fragment();
  try {
    if (!home) home = await api("home");
    // The runs list is there only when a directory is shown.
    const runs = () => home.mode === "runs" ? [h("a", { href: "#" }, "runs"), " / "] : home.mode === "mmsp" ? [h("a", { href: "/" }, "cache"), " / "] : [];
    if (f.get("trace")) {
      crumbs.replaceChildren(...runs(), h("span", {}, f.get("trace")));
      await traceView(main, f, { onStop: (fn) => teardown.push(fn), say });
    } else if (f.get("diff")) {
      crumbs.replaceChildren(...runs(), "diff");
      await diffView(main, f.get("diff"), f.get("with"), f, { onStop: (fn) => teardown.push(fn), say });
    } else if (f.getAll("merge").length) {
      crumbs.replaceChildren(...runs(), "merge");
      await mergeView(main, f.getAll("merge"), f, { onStop: (fn) => teardown.push(fn), say });
    } else {
      crumbs.replaceChildren();
      await homeView();
    }
  } catch (e) {
    put(main, h("p", { class: "error", role: "alert" }, String(e.message || e)));
  }
}

async function homeView() {
  switch (home.mode) {
    case "trace":
      location.replace(link({ trace: home.key }));
      return;
    case "diff":
      location.replace(link({ diff: home.a, with: home.b }));
      return;
    case "merge":
      location.replace(link({ merge: home.keys }));
      return;
    case "mmsp":
      // The cache's own listing, round-by-round pages and all, is at the root.
      location.replace("/");
      return;
    default:
      return runsView();
  }
}

async function runsView() {
  const selected = new Set();
  const table = h("table", { class: "runs" });
  const actions = h("div", { class: "actions" });
  const skipped = h("div", { class: "skipped" });
  const refresh = async () => {
    const fresh = await api("home");
    put(table, h("thead", {}, h("tr", {},
      h("th", {}, ""), h("th", {}, "run"), h("th", {}, "kind"), h("th", {}, "started"),
      h("th", {}, "duration"), h("th", {}, "in"), h("th", {}, "out"), h("th", {}, "events"),
      h("th", {}, "turns"), h("th", {}, "errors"), h("th", {}, "size"), h("th", {}, "state"))),
      h("tbody", {}, fresh.runs.map((r) => runRow(r, selected, update))));
    put(skipped, (fresh.skipped || []).length ? [h("h2", {}, "Not shown"), h("ul", { class: "warnings" }, fresh.skipped.map((k) => h("li", {}, `${k.path}: ${k.reason}`)))] : null);
    if (!fresh.runs.length) {
      table.append(h("tbody", {}, h("tr", {}, h("td", { colspan: 12, class: "muted" },
        "No runs here yet. `reel rec` and `reel llm` write them here."))));
    }
  };
  function update() {
    const keys = [...selected];
    put(actions,
      h("a", { class: "button" + (keys.length === 2 ? "" : " disabled"), href: keys.length === 2 ? link({ diff: keys[0], with: keys[1] }) : undefined }, "diff the two selected"),
      " ",
      h("a", { class: "button" + (keys.length >= 2 ? "" : " disabled"), href: keys.length >= 2 ? link({ merge: keys }) : undefined }, `merge the ${keys.length || ""} selected`));
  }
  put(main,
    h("h1", {}, "Runs"),
    home.dir ? h("p", { class: "muted" }, home.dir) : null,
    actions, table, skipped);
  update();
  await refresh();
  const timer = setInterval(() => refresh().catch(() => {}), 2000);
  teardown.push(() => clearInterval(timer));
}

/** Bytes as `reel ls` shows them. */
function size(n) {
  if (n === null || n === undefined) return "";
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024, u = 0;
  while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
  return `${v.toFixed(1)} ${units[u]}`;
}

function runRow(r, selected, update) {
  const c = r.counts || {};
  const box = h("input", { type: "checkbox", "aria-label": `select ${r.label || r.key}` });
  box.checked = selected.has(r.key);
  box.addEventListener("change", () => {
    if (box.checked) selected.add(r.key); else selected.delete(r.key);
    update();
  });
  return h("tr", { dataset: { key: r.key } },
    h("td", {}, box),
    h("td", {}, h("a", { href: link({ trace: r.key }) }, r.label || r.key), h("div", { class: "muted small" }, r.key)),
    h("td", {}, r.kind || ""),
    h("td", {}, r.startedAt || ""),
    h("td", {}, ms(r.durationMs)),
    h("td", { class: "num" }, num(c.in)), h("td", { class: "num" }, num(c.out)),
    h("td", { class: "num" }, num(c.events)), h("td", { class: "num" }, num(c.turns)),
    h("td", { class: "num" }, num(c.errors)),
    h("td", { class: "num", title: `${num(r.bytes)} bytes` }, size(r.bytes), r.rotated ? h("div", { class: "muted small" }, `+${r.rotated} rotated`) : null),
    h("td", {}, r.interrupted ? h("span", { class: "badge live" }, "no end (live or stopped)") : (r.exitCode !== null && r.exitCode !== undefined ? `exit ${r.exitCode}` : r.reason || "")));
}

window.addEventListener("hashchange", route);
route();
