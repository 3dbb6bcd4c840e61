// The views of a trace, the diff of two and the merge of several. Every view pages
// through the server's index (a page costs the lines on it), and the live ones append
// what a trace still being written adds.

import { h, put, api, link, ms, clock, num, copyButton, whenVisible, changedLines } from "./dom.js";

const VIEWS = ["timeline", "calls", "tools", "turns", "events", "raw"];
const PAGE = 200;

/** The page of one trace: its facts, the view tabs, search, and the view asked for. */
export async function traceView(main, f, ctx) {
  const key = f.get("trace");
  const view = f.get("view") || "timeline";
  let info = await api("trace", { t: key });
  const facts = h("div", { class: "facts" });
  const showFacts = () => put(facts, traceFacts(info));
  showFacts();
  const nameBox = h("input", { type: "search", name: "name", placeholder: "method or tool", "aria-label": "method or tool name" });
  nameBox.value = f.get("name") || "";
  const patBox = h("input", { type: "search", name: "q", placeholder: "text in arguments or results (or /regex/)", "aria-label": "pattern" });
  patBox.value = f.get("q") || "";
  const search = h("form", { class: "search", role: "search" }, nameBox, patBox, h("button", { type: "submit" }, "search"));
  search.addEventListener("submit", (ev) => {
    ev.preventDefault();
    location.hash = link({ trace: key, view: "search", name: nameBox.value.trim(), q: patBox.value.trim() });
  });
  const tabs = h("nav", { class: "tabs", role: "tablist" },
    VIEWS.map((v) => h("a", { href: link({ trace: key, view: v }), class: v === view ? "tab active" : "tab", role: "tab", dataset: { view: v } }, v)));
  const body = h("section", { class: "view", dataset: { view } });
  put(main, h("h1", {}, info.meta?.label || key), facts, h("div", { class: "bar" }, tabs, search), body);

  // The live feed: the header's counts, and each view's appending.
  const growers = [];
  const live = { onGrow: (fn) => growers.push(fn), info: () => info };
  if (!(info.progress && info.progress.ended)) {
    const es = new EventSource(`/_reel/api/follow?${new URLSearchParams({ t: key })}`);
    let busy = false;
    es.addEventListener("progress", async (ev) => {
      const p = JSON.parse(ev.data);
      if (busy) return;
      busy = true;
      try {
        info = await api("trace", { t: key });
        showFacts();
        for (const g of growers) await g(p);
      } catch (e) {
        ctx.say(String(e.message || e));
      } finally {
        busy = false;
      }
      if (p.ended) es.close();
    });
    ctx.onStop(() => es.close());
  }
  const opts = { key, f, live, ctx };
  switch (view) {
    case "calls": return callsView(body, opts);
    case "tools": return toolsView(body, opts);
    case "turns": return turnsView(body, opts);
    case "events": return eventsView(body, opts);
    case "raw": return rawView(body, opts);
    case "search": return searchView(body, opts);
    default: return timelineView(body, opts);
  }
}

function traceFacts(info) {
  const m = info.meta || {};
  const p = info.progress || {};
  const pct = p.size ? Math.min(100, Math.floor((100 * p.bytes) / p.size)) : 100;
  return [
    h("dl", {},
      fact("file", info.path),
      info.format ? fact("read from", `${info.format} (a redacted conversion; line numbers are the conversion's)`) : null,
      fact("kind", `${info.kind}${m.transport ? " · " + m.transport : ""}`),
      m.startedAt ? fact("started", m.startedAt) : null,
      fact("lines", num(info.lines), h("span", { class: "count-lines", dataset: { n: info.lines } })),
      fact("calls", num(info.calls)),
      p.ended ? fact("state", "ended") : fact("state", h("span", { class: "badge live" }, pct < 100 ? `indexing ${pct}%` : "live: following")),
      info.failure ? fact("stopped", h("span", { class: "error" }, info.failure)) : null,
      fact("replay", h("code", { class: "play" }, info.play), copyButton(info.play))),
    (info.warnings || []).length ? h("ul", { class: "warnings" }, info.warnings.map((w) => h("li", {}, w))) : null,
  ];
}

function fact(name, ...value) {
  return h("div", { class: "fact" }, h("dt", {}, name), h("dd", {}, ...value));
}

const ARROW = { in: "→", out: "←", event: "•", command: "⌘", telemetry: "≈" };

/** A timeline row (also the rows of events, search and merge). */
function lineRow(r, opts, start, src) {
  const tr = h("tr", { class: `line c-${r.class} d-${r.dir || "none"}`, tabindex: 0, dataset: { n: r.n, class: r.class, label: r.label || "" } },
    src !== undefined ? h("td", {}, h("span", { class: `badge src src-${src % 8}` }, opts.keys[src])) : null,
    h("td", { class: "ln" }, String(r.n)),
    h("td", { class: "time" }, clock(r.t, start)),
    h("td", { class: "dir", title: r.dir || r.class }, ARROW[r.dir] || ""),
    h("td", { class: "label" }, r.label || r.class,
      r.corrId ? h("span", { class: "badge corr", title: `corr_id ${r.corrId}` }, r.corrId) : null,
      r.session ? h("span", { class: "badge session", title: `session ${r.session}` }, short(r.session)) : null,
      r.origin ? h("span", { class: "badge origin" }, r.origin) : null),
    h("td", { class: "summary" }, r.summary),
    h("td", { class: "latency num" }, r.latencyMs !== undefined && r.latencyMs !== null ? ms(r.latencyMs) : ""));
  const cols = tr.children.length;
  let detail = null;
  const toggle = async () => {
    if (detail) { detail.remove(); detail = null; tr.classList.remove("open"); return; }
    tr.classList.add("open");
    detail = h("tr", { class: "detail" }, h("td", { colspan: cols }, h("p", { class: "muted" }, "loading…")));
    tr.after(detail);
    const key = src !== undefined ? opts.keys[src] : opts.key;
    try {
      const full = await api("line", { t: key, n: r.n });
      put(detail.firstChild, lineDetail(full, key, opts));
    } catch (e) {
      put(detail.firstChild, h("p", { class: "error" }, String(e.message || e)));
    }
  };
  tr.addEventListener("click", toggle);
  tr.addEventListener("keydown", (ev) => { if (ev.key === "Enter") toggle(); });
  tr.open = toggle;
  return tr;
}

function short(s) {
  return s.length > 12 ? `${s.slice(0, 8)}…` : s;
}

/** A line expanded: its payload pretty-printed (copyable), its partner, the line itself. */
function lineDetail(full, key, opts) {
  const payload = full.pretty ?? full.text;
  const info = opts.live ? opts.live.info() : null;
  return h("div", { class: "line-detail" },
    h("div", { class: "detail-tools" },
      copyButton(payload, "copy payload"), " ", copyButton(full.text, "copy line"),
      full.pair ? h("a", { href: link({ trace: key, view: "timeline", line: full.pair }) }, full.pair > full.n ? ` its answer: line ${full.pair}` : ` its request: line ${full.pair}`) : null,
      full.latencyMs !== undefined && full.latencyMs !== null ? h("span", { class: "muted" }, ` latency ${ms(full.latencyMs)}`) : null,
      full.cut ? h("span", { class: "warn" }, ` (the first ${num(full.text.length)} bytes of ${num(full.bytes)})`) : null),
    h("pre", { class: "payload" }, payload),
    info && full.class === "message" ? h("div", { class: "play-row" }, "replay the run from the tape: ", h("code", {}, info.play), copyButton(info.play)) : null);
}

/** A table that pages through `fetch(from)` → {rows, next}, more on scroll, and (when
 * `live`) appends what a growing trace adds. */
function pagedTable(el, { head, fetch, row, live, from = 1, earlier }) {
  const tbody = h("tbody", {});
  const table = h("table", { class: "lines" }, head ? h("thead", {}, head) : null, tbody);
  const sentinel = h("div", { class: "sentinel" });
  const note = h("p", { class: "muted end-note" });
  let next = from;
  let last = from - 1;
  let loading = false;
  let prev = null;
  const add = (rows) => {
    for (const r of rows) {
      const tr = row(r, prev);
      tbody.append(tr);
      prev = r;
    }
  };
  const more = async () => {
    if (loading || next === null) return;
    loading = true;
    try {
      const page = await fetch(next);
      add(page.rows);
      if (page.resume !== undefined) last = page.resume - 1;
      else if (page.rows.length) last = page.last(page.rows[page.rows.length - 1]);
      next = page.next;
      note.textContent = next === null ? (page.rows.length || tbody.children.length ? "" : "nothing here") : "";
    } catch (e) {
      note.textContent = String(e.message || e);
      next = null;
    } finally {
      loading = false;
    }
    if (next !== null && sentinel.getBoundingClientRect().top < innerHeight + 600) more();
  };
  put(el, earlier || null, table, sentinel, note);
  whenVisible(sentinel, more);
  if (live) {
    live.onGrow(async () => {
      if (next === null) {
        next = last + 1;
        await more();
      }
    });
  }
  return { tbody, ready: more() };
}

function timelineView(el, { key, f, live }) {
  const start = live.info().startedMs;
  const target = Number(f.get("line")) || 0;
  const from = target > 20 ? target - 20 : 1;
  const earlier = from > 1 ? h("p", {}, h("a", { href: link({ trace: key, view: "timeline" }) }, `lines 1–${from - 1} are above: show from the first line`)) : null;
  const corr = { id: null, head: null, n: 0 };
  // The calls at a glance, above the timeline.
  const glance = h("div", { class: "glance" });
  const rest = h("div", {});
  put(el, glance, rest);
  if (live.info().calls) {
    api("stats", { t: key }).then((s) => {
      if ((s.tools || []).length) put(glance, h("h2", {}, "Calls at a glance"), toolTable(s, live.info(), 5));
    }).catch(() => {});
  }
  const t = pagedTable(rest, {
    head: h("tr", {}, h("th", {}, "line"), h("th", {}, "time"), h("th", {}, ""), h("th", {}, "what"), h("th", {}, "summary"), h("th", {}, "latency")),
    from,
    earlier,
    live,
    fetch: async (n) => {
      const p = await api("lines", { t: key, from: n, count: PAGE });
      return { rows: p.lines, next: p.next, last: (r) => r.n };
    },
    row: (r) => {
      const tr = lineRow(r, { key, live }, start);
      // Lines that share a corr_id are one group: the first heads it, the rest fold.
      if (r.corrId && r.corrId === corr.id) {
        tr.classList.add("corr-member");
        corr.n += 1;
        corr.head.dataset.members = String(corr.n);
      } else if (r.corrId) {
        Object.assign(corr, { id: r.corrId, head: tr, n: 0 });
        tr.classList.add("corr-head");
      } else {
        corr.id = null;
      }
      if (r.n === target) tr.classList.add("target");
      return tr;
    },
  });
  t.ready.then(() => {
    const row = t.tbody.querySelector(`tr[data-n="${target}"]`);
    if (row) { row.scrollIntoView({ block: "center" }); row.open(); }
  });
}

function callsView(el, { key, live }) {
  const info = live.info();
  const summary = h("div", { class: "calls-summary" });
  const wrap = h("div", {});
  put(el, summary, wrap);
  api("stats", { t: key }).then((s) => put(summary, toolTable(s, info, 8))).catch(() => {});
  const t = pagedTable(wrap, {
    head: h("tr", {}, h("th", {}, "#"), h("th", {}, ""), h("th", {}, "method"), h("th", {}, "name"), h("th", {}, "session"), h("th", {}, "id"), h("th", {}, "lines"), h("th", {}, "latency"), h("th", {}, "outcome"), h("th", {}, "in between")),
    from: 0,
    live,
    fetch: async (i) => {
      const p = await api("calls", { t: key, from: i, count: PAGE });
      return { rows: p.calls, next: p.next, last: (c) => c.i };
    },
    row: (c) => callRow(c, key, info),
  });
  return t.ready;
}

function callRow(c, key, info) {
  const tr = h("tr", { class: `call o-${c.outcome.replace(" ", "-")}`, tabindex: 0, dataset: { i: c.i, request: c.request, response: c.response ?? "" } },
    h("td", { class: "num" }, String(c.i + 1)),
    h("td", { class: "dir", title: c.dir === "in" ? "client → server" : "server → client" }, c.dir === "in" ? "→" : "←"),
    h("td", {}, c.method),
    h("td", {}, c.subject || ""),
    h("td", {}, c.session ? short(c.session) : ""),
    h("td", { class: "mono" }, c.id),
    h("td", {}, h("a", { href: link({ trace: key, view: "timeline", line: c.request }) }, String(c.request)), c.response ? " → " : "", c.response ? h("a", { href: link({ trace: key, view: "timeline", line: c.response }) }, String(c.response)) : null),
    h("td", { class: "latency num" }, ms(c.latencyMs)),
    h("td", { class: "outcome" }, c.outcome + (c.errorCode !== null && c.errorCode !== undefined ? ` ${c.errorCode}` : "") + (c.cancelled ? " (cancelled)" : "")),
    h("td", {}, c.attached.length ? `${c.attached.length} message${c.attached.length > 1 ? "s" : ""}` : ""));
  let detail = null;
  tr.addEventListener("click", async (ev) => {
    if (ev.target.closest("a")) return;
    if (detail) { detail.remove(); detail = null; return; }
    detail = h("tr", { class: "detail" }, h("td", { colspan: 10 }, "loading…"));
    tr.after(detail);
    const [req, resp] = await Promise.all([
      api("line", { t: key, n: c.request }),
      c.response ? api("line", { t: key, n: c.response }) : null,
    ]);
    put(detail.firstChild, h("div", { class: "call-detail" },
      h("div", { class: "side" }, h("h3", {}, c.dir === "in" ? `request, line ${c.request} (client → server)` : `request, line ${c.request} (server → client)`), h("pre", { class: "payload" }, req.pretty ?? req.text), copyButton(req.pretty ?? req.text, "copy request")),
      h("div", { class: "side" }, h("h3", {}, resp ? `${c.outcome}, line ${c.response}` : "no answer"), resp ? h("pre", { class: "payload" }, resp.pretty ?? resp.text) : h("p", { class: "muted" }, "pending: the trace has no response"), resp ? copyButton(resp.pretty ?? resp.text, "copy response") : null),
      c.attached.length ? h("div", { class: "attached" }, h("h3", {}, "in between"), h("ul", {}, c.attached.map((a) => h("li", {},
        h("a", { href: link({ trace: key, view: "timeline", line: a.line }) }, `line ${a.line}`), ` ${ARROW[a.dir] || ""} ${a.method || ""}${a.isRequest ? " (request: see its own call)" : ""}`)))) : null,
      h("div", { class: "play-row" }, "replay the run from the tape: ", h("code", {}, info.play), copyButton(info.play))));
  });
  return tr;
}

function toolTable(s, info, limit) {
  const rows = (s.tools || []).slice();
  const total = rows.reduce((a, r) => a + r.calls, 0) || 1;
  const shown = limit ? rows.sort((a, b) => b.calls - a.calls).slice(0, limit) : rows;
  return h("table", { class: "tools" },
    h("thead", {}, h("tr", {}, h("th", {}, "tool"), h("th", {}, "calls"), h("th", {}, "share"), h("th", {}, "mean"), h("th", {}, "p50"), h("th", {}, "p95"), h("th", {}, "errors"), h("th", {}, "pending"), h("th", {}, "origin"))),
    h("tbody", {}, shown.map((r) => h("tr", { dataset: { tool: r.name } },
      h("td", {}, h("a", { href: link({ trace: info.key, view: "search", name: r.name }) }, r.name)),
      h("td", { class: "num" }, num(r.calls)),
      h("td", { class: "num" }, `${Math.round((100 * r.calls) / total)}%`),
      h("td", { class: "num" }, ms(r.meanMs)),
      h("td", { class: "num" }, ms(r.p50Ms)),
      h("td", { class: "num" }, ms(r.p95Ms)),
      h("td", { class: "num" }, r.errors ? `${r.errors} (${((100 * r.errors) / r.calls).toFixed(1)}%)` : "0"),
      h("td", { class: "num" }, num(r.pending)),
      h("td", {}, r.origin || "")))),
    limit && rows.length > limit ? h("caption", {}, h("a", { href: link({ trace: info.key, view: "tools" }) }, `all ${rows.length} tools`)) : null);
}

async function toolsView(el, { key, live }) {
  const s = await api("stats", { t: key });
  const m = s.models;
  put(el,
    h("h2", {}, "Tools"),
    (s.tools || []).length ? toolTable(s, live.info()) : h("p", { class: "muted" }, "No tool calls."),
    m ? modelsTable(m) : null,
    (s.errors || []).length ? [h("h2", {}, "Errors"), h("ul", { class: "errors" }, s.errors.map((e) => h("li", {}, h("span", { class: "muted" }, e.t || ""), ` ${e.name || ""}: ${e.message || ""}`)))] : null,
    h("p", { class: "muted" }, "The numbers of `reel stats` (mean from the calls view's latencies)."));
}

function modelsTable(m) {
  const rows = m.perModel || [];
  const cost = m.cost || {};
  return [h("h2", {}, "Models"), h("table", { class: "models" },
    h("thead", {}, h("tr", {}, h("th", {}, "model"), h("th", {}, "calls"), h("th", {}, "input"), h("th", {}, "cache read"), h("th", {}, "cache write"), h("th", {}, "output"), h("th", {}, "thinking"), h("th", {}, "cost (est.)"))),
    h("tbody", {}, rows.map((r) => h("tr", { dataset: { model: r.model } },
      h("td", {}, r.model), h("td", { class: "num" }, num(r.calls)),
      h("td", { class: "num" }, num(r.inputTokens)), h("td", { class: "num" }, num(r.cacheReadTokens)),
      h("td", { class: "num" }, num(r.cacheCreationTokens)), h("td", { class: "num" }, num(r.outputTokens)),
      h("td", { class: "num" }, num(r.thinkingTokens) + (r.thinkingEstimated ? " (est.)" : "")),
      h("td", { class: "num" }, r.estCostUsd !== undefined && r.estCostUsd !== null ? `$${Number(r.estCostUsd).toFixed(4)}` : r.priced === false ? "unpriced" : "")))),
    cost.totalUsd !== undefined && cost.totalUsd !== null ? h("caption", { class: "muted" }, `estimated total $${Number(cost.totalUsd).toFixed(4)}${cost.partial ? " (some models unpriced: a lower bound)" : ""}${cost.asOf ? `, list prices of ${cost.asOf}` : ""}`) : null)];
}

function turnsView(el, { key, live }) {
  const showEchoed = h("input", { type: "checkbox", id: "echoed" });
  const head = h("div", { class: "turns-head" }, h("label", { for: "echoed" }, showEchoed, " show echoed turns (history the client re-sent)"));
  const models = h("div", {});
  const list = h("div", { class: "turns" });
  const sentinel = h("div", { class: "sentinel" });
  put(el, models, head, list, sentinel);
  showEchoed.addEventListener("change", () => list.classList.toggle("show-echoed", showEchoed.checked));
  api("stats", { t: key }).then((s) => { if (s.models) put(models, modelsTable(s.models)); }).catch(() => {});
  const uses = new Map();
  let next = 1, last = 0, loading = false;
  const more = async () => {
    if (loading || next === null) return;
    loading = true;
    try {
      const p = await api("lines", { t: key, class: "turn", from: next, count: 100, full: 1 });
      for (const r of p.lines) { list.append(turnCard(r, key, uses)); last = r.n; }
      next = p.next;
      if (!list.children.length && next === null) list.append(h("p", { class: "muted" }, "No turns: this trace holds no LLM turns."));
    } finally { loading = false; }
  };
  whenVisible(sentinel, more);
  live.onGrow(async () => { if (next === null) { next = last + 1; await more(); } });
  return more();
}

function turnCard(r, key, uses) {
  let t;
  try { t = JSON.parse(r.text); } catch { t = { role: "?", blocks: [] }; }
  const u = t.usage || {};
  const card = h("article", { class: `turn role-${String(t.role).replace(/[^a-z]/g, "")}${t.echoed ? " echoed" : ""}`, id: `turn-${r.n}`, dataset: { n: r.n } },
    h("header", {},
      h("span", { class: "badge role" }, t.role || "turn"),
      t.model ? h("span", { class: "model" }, t.model) : null,
      t.echoed ? h("span", { class: "badge" }, "echoed") : null,
      h("a", { class: "ln", href: link({ trace: key, view: "timeline", line: r.n }) }, `line ${r.n}`),
      t.stop_reason ? h("span", { class: "muted" }, ` stop: ${t.stop_reason}`) : null,
      u.input_tokens !== undefined || u.output_tokens !== undefined ? h("span", { class: "usage" }, ` in ${num(u.input_tokens)} · out ${num(u.output_tokens)}${u.cache_read_input_tokens ? ` · cache ${num(u.cache_read_input_tokens)}` : ""}`) : null),
    (t.blocks || []).map((b) => block(b, r.n, uses, Boolean(t.echoed))));
  return card;
}

/** A link that scrolls to `target` on this page: the fragment, which names the view,
 * stays as it is. */
function jump(target, text) {
  return h("a", { href: location.hash, class: "pair-link", on: { click: (ev) => {
    ev.preventDefault();
    target.scrollIntoView({ block: "center" });
    target.classList.add("flash");
    setTimeout(() => target.classList.remove("flash"), 1200);
  } } }, text);
}

/** A turn's block; `uses` maps tool_use ids to their blocks so a tool_result links to
 * its tool_use. An echoed turn (history re-sent) never takes a pairing over from the
 * turn that happened. */
function block(b, n, uses, echoed) {
  const ty = b && b.type;
  switch (ty) {
    case "text":
      return h("div", { class: "block text" }, h("pre", {}, b.text ?? ""));
    case "thinking":
    case "redacted_thinking":
      return h("details", { class: "block thinking" }, h("summary", {}, ty === "thinking" ? "thinking" : "thinking (redacted)"), h("pre", {}, b.thinking ?? b.data ?? ""));
    case "tool_use": {
      const el = h("div", { class: "block tool-use", dataset: { id: b.id || "" } },
        h("div", { class: "block-head" }, "tool_use ", h("strong", {}, b.name || "?"), h("span", { class: "mono muted" }, ` ${b.id || ""}`), h("span", { class: "paired" })),
        h("pre", {}, JSON.stringify(b.input ?? {}, null, 2)));
      if (b.id && (!echoed || !uses.has(b.id))) uses.set(b.id, { el, n, paired: false });
      return el;
    }
    case "tool_result": {
      const use = uses.get(b.tool_use_id);
      const el = h("div", { class: "block tool-result" + (b.is_error ? " is-error" : ""), dataset: { for: b.tool_use_id || "" } },
        h("div", { class: "block-head" }, b.is_error ? "tool_result (error) " : "tool_result ",
          use ? jump(use.el, `for ${use.el.querySelector("strong").textContent} (${b.tool_use_id})`) : h("span", { class: "muted" }, `for ${b.tool_use_id || "?"} (its tool_use is not in this trace)`)),
        h("pre", {}, typeof b.content === "string" ? b.content : JSON.stringify(b.content ?? null, null, 2)));
      if (use && (!echoed || !use.paired)) {
        put(use.el.querySelector(".paired"), " → ", jump(el, "its result"));
        use.paired = !echoed;
      }
      return el;
    }
    case "history_elided":
      return h("div", { class: "block elided" }, `… ${b.count ?? "some"} earlier turns elided (the client re-sent history recorded before)`);
    default:
      return h("div", { class: "block unknown" }, h("div", { class: "block-head" }, `block of type ${ty ?? "(none)"}`), h("pre", {}, JSON.stringify(b, null, 2)));
  }
}

function eventsView(el, { key, f, live }) {
  const info = live.info();
  const kinds = (info.labels || []).filter((l) => l.class === "event" || l.class === "other" || l.class === "bad");
  const chosen = f.get("kind") || "";
  const chips = h("div", { class: "chips" },
    h("a", { href: link({ trace: key, view: "events" }), class: chosen ? "chip" : "chip active" }, `all (${num(kinds.reduce((a, k) => a + k.lines, 0))})`),
    kinds.map((k) => h("a", { href: link({ trace: key, view: "events", kind: k.label || "" }), class: (k.label || "") === chosen && chosen ? "chip active" : "chip", dataset: { kind: k.label || "" } }, `${k.label || k.class} (${num(k.lines)})`)));
  const wrap = h("div", {});
  put(el, chips, wrap);
  const start = info.startedMs;
  return pagedTable(wrap, {
    head: h("tr", {}, h("th", {}, "line"), h("th", {}, "time"), h("th", {}, ""), h("th", {}, "kind"), h("th", {}, "summary"), h("th", {}, "")),
    live,
    fetch: async (n) => {
      const p = await api("lines", { t: key, from: n, count: PAGE, class: "event,other,bad", label: chosen });
      return { rows: p.lines, next: p.next, last: (r) => r.n };
    },
    row: (r) => lineRow(r, { key, live }, start),
  }).ready;
}

function rawView(el, { key, live }) {
  const t = pagedTable(el, {
    live,
    fetch: async (n) => {
      const p = await api("raw", { t: key, from: n, count: 500 });
      return { rows: p.lines, next: p.next, last: (r) => r.n };
    },
    row: (r) => h("tr", { class: "raw", dataset: { n: r.n } }, h("td", { class: "ln" }, String(r.n)), h("td", {}, h("code", {}, r.text), r.cut ? h("span", { class: "warn" }, ` … (${num(r.bytes)} bytes)`) : null)),
  });
  el.querySelector("table").classList.add("raw");
  return t.ready;
}

function searchView(el, { key, f, live }) {
  const name = f.get("name") || "", q = f.get("q") || "";
  const wrap = h("div", {});
  put(el, h("p", { class: "muted" }, name || q ? `lines ${name ? `of ${name}` : ""}${q ? ` holding “${q}”` : ""}` : "Give a method or tool name, a pattern, or both."), wrap);
  if (!name && !q) return;
  const state = h("p", { class: "muted search-state" });
  wrap.after(state);
  return pagedTable(wrap, {
    head: h("tr", {}, h("th", {}, "line"), h("th", {}, "time"), h("th", {}, ""), h("th", {}, "what"), h("th", {}, "summary"), h("th", {}, "latency")),
    live,
    fetch: async (n) => {
      const p = await api("search", { t: key, name, q, from: n });
      // Lines not indexed yet are searched when they are (the live feed says so).
      state.textContent = p.complete ? "" : `searched the ${num(p.scanned)} lines indexed so far; more are searched as they come`;
      return { rows: p.lines, next: p.next, resume: p.next === null ? p.scanned + 1 : undefined, last: (r) => r.n };
    },
    row: (r) => lineRow(r, { key, live }, live.info().startedMs),
  }).ready;
}

/** Two traces, aligned as `reel diff` aligns them; the first drift side by side. */
export async function diffView(main, a, b, f, ctx) {
  ctx.say("diffing…");
  const d = await api("diff", { a, b });
  ctx.say("");
  const c = d.counts || {};
  const panel = h("section", { class: "drift-detail" });
  const list = h("ol", { class: "drifts" });
  put(main,
    h("h1", {}, "Diff"),
    h("div", { class: "diff-head" },
      h("div", {}, h("span", { class: "badge side-a" }, "A"), " ", h("a", { href: link({ trace: a }) }, a)),
      h("div", {}, h("span", { class: "badge side-b" }, "B"), " ", h("a", { href: link({ trace: b }) }, b)),
      h("p", { class: `verdict v-${d.verdict}`, dataset: { verdict: d.verdict, exit: d.exitCode } },
        d.verdict === "identical" ? "identical" : `${d.verdict} drift`, ` (reel diff exits ${d.exitCode})`),
      h("p", { class: "muted" }, `${num(c.paired)} paired, ${num(c.identical)} identical, ${num(c.output)} output drift, ${num(c.structural)} structural, ${num(c.added)} only in B, ${num(c.removed)} only in A`)),
    (d.warnings || []).length ? h("ul", { class: "warnings" }, d.warnings.map((w) => h("li", {}, w))) : null,
    h("div", { class: "diff-body" }, list, panel),
    (d.notes || []).length ? [h("h2", {}, "Notes (not drift)"), h("ul", {}, d.notes.map((n) => h("li", {}, n.summary || JSON.stringify(n))))] : null);
  const items = (d.drifts || []).map((dr, i) => {
    const li = h("li", { class: `drift k-${dr.class}`, tabindex: 0, dataset: { i } },
      h("span", { class: `badge cls-${dr.class}` }, dr.class), " ", h("strong", {}, dr.subject || dr.kind), " ", h("span", {}, dr.summary || dr.kind));
    li.addEventListener("click", () => focus(i));
    return li;
  });
  list.append(...items);
  if (!items.length) put(panel, h("p", {}, "No drift: the runs agree."));
  if (d.omittedDrifts) list.append(h("li", { class: "muted" }, `… ${d.omittedDrifts} more drifts not kept`));
  async function focus(i) {
    items.forEach((li, k) => li.classList.toggle("focused", k === i));
    const dr = d.drifts[i];
    const lineA = dr.a ? dr.a.responseLine ?? dr.a.line : null;
    const lineB = dr.b ? dr.b.responseLine ?? dr.b.line : null;
    const [la, lb] = await Promise.all([lineA ? api("line", { t: a, n: lineA }) : null, lineB ? api("line", { t: b, n: lineB }) : null]);
    const ta = la ? la.pretty ?? la.text : "", tb = lb ? lb.pretty ?? lb.text : "";
    const [da, db] = changedLines(ta, tb);
    const side = (name, key, place, line, text, changed) => h("div", { class: "side" },
      h("h3", {}, h("span", { class: `badge side-${name.toLowerCase()}` }, name),
        place ? [" ", h("a", { href: link({ trace: key, view: "timeline", line: place.line }) }, `line ${place.line}`),
          place.responseLine ? [", answered at ", h("a", { href: link({ trace: key, view: "timeline", line: place.responseLine }) }, `line ${place.responseLine}`)] : null,
          line ? ` (shown: line ${line})` : null] : " (absent)"),
      h("pre", { class: "payload diffed" }, text.split("\n").map((l, k) => h("span", { class: changed.has(k) ? "chg" : "same" }, l))));
    put(panel,
      h("h2", {}, `${dr.subject || dr.kind}: ${dr.summary || ""}`),
      (dr.differences || []).length ? h("table", { class: "pointers" }, h("thead", {}, h("tr", {}, h("th", {}, "JSON pointer"), h("th", {}, "A"), h("th", {}, "B"))),
        h("tbody", {}, dr.differences.map((x) => h("tr", {}, h("td", { class: "mono" }, x.pointer), h("td", { class: "mono" }, fmtVal(x.a)), h("td", { class: "mono" }, fmtVal(x.b)))))) : null,
      h("div", { class: "sides" }, side("A", a, dr.a, lineA, ta, da), side("B", b, dr.b, lineB, tb, db)));
  }
  if (items.length) focus(0);
}

function fmtVal(v) {
  return v === undefined ? "(absent)" : typeof v === "string" ? v : JSON.stringify(v);
}

/** Several traces by time, each line badged with its source. */
export async function mergeView(main, keys, f, ctx) {
  const wrap = h("div", {});
  put(main, h("h1", {}, `Merge of ${keys.length} traces`),
    h("p", {}, keys.map((k, i) => [h("span", { class: `badge src src-${i % 8}` }, k), " "])),
    h("p", { class: "muted" }, "Requests pair with their responses within their own trace and session, never across traces."),
    wrap);
  return pagedTable(wrap, {
    head: h("tr", {}, h("th", {}, "trace"), h("th", {}, "line"), h("th", {}, "time"), h("th", {}, ""), h("th", {}, "what"), h("th", {}, "summary"), h("th", {}, "latency")),
    from: 0,
    fetch: async (n) => {
      const p = await api("merge", { t: keys, from: n, count: PAGE });
      return { rows: p.lines, next: p.next, last: () => 0 };
    },
    row: (r) => lineRow(r, { keys }, null, r.src),
  }).ready;
}
