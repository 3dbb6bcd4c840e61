// Building the page without ever parsing trace content as markup: every string goes in
// through textContent or a checked attribute, so a payload carrying <script>, an
// onerror handler or a javascript: URL stays the text it is.

/** Characters that reorder or hide text (bidi controls) or move the cursor (C0/C1
 * controls, ANSI escapes): shown as visible escapes so a hostile trace cannot make one
 * thing look like another. */
const HIDDEN = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** `s` with its control and bidi characters made visible (\u{…}). */
export function visible(s) {
  return String(s).replace(HIDDEN, (c) => `\\u{${c.codePointAt(0).toString(16)}}`);
}

const ATTRS = new Set(["class", "title", "id", "colspan", "type", "value", "placeholder", "checked", "for", "name", "role", "tabindex", "aria-label", "aria-expanded"]);

/** An element: `h("td", {class: "x"}, "text", child, …)`. Strings become text nodes;
 * only known attributes are set; `href` only to a fragment or a same-origin path of
 * the viewer's own; `on` takes event handlers. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "on") {
      for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
    } else if (k === "href") {
      const s = String(v);
      if (s.startsWith("#") || s.startsWith("/_reel/") || s === "/") el.setAttribute("href", s);
    } else if (k === "dataset") {
      for (const [dk, dv] of Object.entries(v)) el.dataset[dk] = String(dv);
    } else if (ATTRS.has(k)) {
      el.setAttribute(k, v === true ? "" : String(v));
    } else {
      throw new Error(`attribute ${k} is not allowed`);
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(visible(c)));
  }
}

/** Replaces the children of `el`. */
export function put(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** GET a JSON API; throws an Error carrying the server's message. */
export async function api(name, params = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === "") continue;
    if (Array.isArray(v)) v.forEach((x) => q.append(k, x));
    else q.append(k, String(v));
  }
  const resp = await fetch(`/_reel/api/${name}?${q}`, { headers: { Accept: "application/json" } });
  const body = await resp.json().catch(() => ({ error: `HTTP ${resp.status}` }));
  if (!resp.ok) throw new Error(body.error || `HTTP ${resp.status}`);
  return body;
}

/** Milliseconds for people: 12 ms, 1.4 s, 2 min 3 s. */
export function ms(v) {
  if (v === null || v === undefined) return "";
  if (v < 1000) return `${Math.round(v)} ms`;
  if (v < 60000) return `${(v / 1000).toFixed(v < 10000 ? 2 : 1)} s`;
  return `${Math.floor(v / 60000)} min ${Math.round((v % 60000) / 1000)} s`;
}

/** A line's time: the clock time, and the offset from the start when known. */
export function clock(t, start) {
  if (t === null || t === undefined) return "";
  const d = new Date(t);
  const hh = d.toISOString().slice(11, 23);
  return start ? `${hh} (+${ms(t - start)})` : hh;
}

/** A number with thousands grouped. */
export function num(n) {
  return n === null || n === undefined ? "" : Number(n).toLocaleString("en-US");
}

/** A button that copies `text()` to the clipboard. */
export function copyButton(text, label = "copy") {
  const b = h("button", { class: "copy", type: "button", title: "copy to the clipboard" }, label);
  b.addEventListener("click", async (ev) => {
    ev.stopPropagation();
    const t = typeof text === "function" ? text() : text;
    try {
      await navigator.clipboard.writeText(t);
      b.textContent = "copied";
    } catch {
      // No clipboard (an insecure context, a denied permission): select the text instead.
      const area = h("textarea", { class: "copy-fallback" });
      area.value = t;
      b.after(area);
      area.select();
      b.textContent = "select + ⌘/Ctrl-C";
    }
    setTimeout(() => (b.textContent = label), 1500);
  });
  return b;
}

/** The fragment's parameters (`#view=calls&line=3`). */
export function fragment() {
  return new URLSearchParams(location.hash.replace(/^#/, ""));
}

/** A fragment link from parameters. */
export function link(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === "") continue;
    if (Array.isArray(v)) v.forEach((x) => q.append(k, x));
    else q.append(k, String(v));
  }
  return `#${q}`;
}

/** Calls `more()` whenever `sentinel` scrolls into view. */
export function whenVisible(sentinel, more) {
  const io = new IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting)) more();
  }, { rootMargin: "600px" });
  io.observe(sentinel);
  return io;
}

/** Lines of `a` and `b` that differ, by a longest-common-subsequence walk: two sets of
 * line indexes. Payloads beyond 4000 lines a side are compared line by line. */
export function changedLines(a, b) {
  const A = a.split("\n"), B = b.split("\n");
  const da = new Set(), db = new Set();
  if (A.length > 4000 || B.length > 4000) {
    const n = Math.max(A.length, B.length);
    for (let i = 0; i < n; i++) if (A[i] !== B[i]) { da.add(i); db.add(i); }
    return [da, db];
  }
  const L = Array.from({ length: A.length + 1 }, () => new Uint32Array(B.length + 1));
  for (let i = A.length - 1; i >= 0; i--)
    for (let j = B.length - 1; j >= 0; j--)
      L[i][j] = A[i] === B[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  let i = 0, j = 0;
  while (i < A.length && j < B.length) {
    if (A[i] === B[j]) { i++; j++; }
    else if (L[i + 1][j] >= L[i][j + 1]) da.add(i++);
    else db.add(j++);
  }
  while (i < A.length) da.add(i++);
  while (j < B.length) db.add(j++);
  return [da, db];
}
