//! The pages in a real headless Chromium, judged against the traces they show: every
//! view of a server-everything session over stdio and over Streamable HTTP, of an llm
//! trace, and of an MMSP cache directory (its RFC-0010 pages too); the diff of two runs
//! against `reel diff --json`; a merge of three with each line badged by its source and
//! every pair kept within its own trace. Each page loads without a console error and
//! leaves a screenshot in the artefact directory.

use std::collections::{BTreeSet, HashMap};

use serde_json::{Value, json};

use super::support::{
    SHOWN, Viewer, http_trace, key, lines_of, llm_trace, mmsp_cache, ms_text, num_text,
    pair_by_hand, reel_json, stdio_trace, stdio_trace_again,
};
use super::webdriver::{Browser, artefact_dir};
use crate::harness::play_http_support::run;
use crate::harness::reel;

/// Loads `url` afresh (never a mere fragment change) and waits for `css`.
pub fn load(b: &Browser, url: &str, css: &str) {
    b.goto("about:blank");
    b.goto(url);
    b.wait(css, SHOWN);
}

/// Keeps a screenshot named `name` and fails on any console error of the page.
pub fn settle(b: &Browser, name: &str) {
    b.screenshot(&artefact_dir().join(format!("{name}.png")));
    let errors = b.console_errors();
    assert!(errors.is_empty(), "{name}: console errors: {errors:?}");
}

/// Scrolls until `css` matches exactly `want` elements (the pages load more on scroll).
pub fn wait_count(b: &Browser, css: &str, want: usize) {
    let script = format!(
        "window.scrollTo(0, document.body.scrollHeight); \
         const n = document.querySelectorAll({css:?}).length; return n === {want} ? 'yes' : ''"
    );
    let got = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        b.wait_until(&script, SHOWN)
    }));
    if got.is_err() {
        let n = b.find_all(css).len();
        panic!("`{css}` matches {n} elements, not {want}");
    }
}

/// The value `script` returns.
fn js(b: &Browser, script: &str) -> Value {
    b.exec(script, &[])
}

/// Every view of one trace (`k` its key) checked against `lines` (what the file holds,
/// or the conversion of a foreign one); screenshots named `VIEW-TAG.png`.
pub fn tour(b: &Browser, v: &Viewer, k: &str, lines: &[Value], tag: &str) {
    let page = |view: &str| v.page(&format!("trace={}&view={view}", urlencode(k)));
    let (requests, pairs) = pair_by_hand(lines);
    let calls = v.api(&format!("calls?t={}&count=1000", urlencode(k)));
    assert_eq!(calls["total"], requests, "{tag}: calls");

    // Timeline: one row per line, in order; the header counts them.
    load(b, &page("timeline"), "tr.line[data-n]");
    wait_count(b, "tr.line[data-n]", lines.len());
    let ns = js(
        b,
        "return [...document.querySelectorAll('tr.line[data-n]')].map(r => +r.dataset.n)",
    );
    let want: Vec<usize> = (1..=lines.len()).collect();
    assert_eq!(ns, json!(want), "{tag}: the timeline's rows");
    let counted = b.wait(".count-lines[data-n]", SHOWN).attr("data-n");
    assert_eq!(
        counted,
        Some(lines.len().to_string()),
        "{tag}: the header's count"
    );
    // A response row: its latency shown, its payload the line's raw, its request named.
    let answered = pairs
        .iter()
        .filter_map(|(&q, &r)| r.map(|r| (q, r)))
        .filter(|&(_, r)| lines[r as usize - 1].to_string().len() < 4000)
        .min();
    assert!(
        requests == 0 || answered.is_some(),
        "{tag}: no answered call to open"
    );
    if let Some((req, resp)) = answered {
        let row = b.wait(&format!("tr.line[data-n=\"{resp}\"]"), SHOWN);
        let latency = row.find_all("td.latency")[0].text();
        let api_row = &v.api(&format!("lines?t={}&from={resp}&count=1", urlencode(k)))["lines"][0];
        let want_latency = api_row["latencyMs"]
            .as_f64()
            .map(ms_text)
            .unwrap_or_default();
        assert_eq!(latency, want_latency, "{tag}: latency of line {resp}");
        assert!(
            !latency.is_empty(),
            "{tag}: a paired response shows its latency"
        );
        row.click();
        let pre = b.wait("tr.detail pre.payload", SHOWN);
        let shown: Value = serde_json::from_str(&pre.text())
            .unwrap_or_else(|e| panic!("{tag}: the payload is not JSON ({e}): {}", pre.text()));
        assert_eq!(
            shown,
            lines[resp as usize - 1]["raw"],
            "{tag}: line {resp}'s payload"
        );
        let detail = b.wait("tr.detail .line-detail", SHOWN).text();
        assert!(
            detail.contains(&format!("its request: line {req}")),
            "{tag}: {detail}"
        );
    }
    settle(b, &format!("timeline-{tag}"));

    // Calls: one row per request, paired as the file pairs them.
    load(
        b,
        &page("calls"),
        if requests > 0 {
            "tr.call[data-i]"
        } else {
            "section.view"
        },
    );
    wait_count(b, "tr.call[data-i]", requests);
    let rows = js(
        b,
        "return [...document.querySelectorAll('tr.call[data-i]')].map(r => [+r.dataset.request, r.dataset.response === '' ? null : +r.dataset.response, r.querySelector('td.latency').textContent])",
    );
    let api_calls = calls["calls"].as_array().unwrap();
    for (row, c) in rows.as_array().unwrap().iter().zip(api_calls) {
        let req = row[0].as_u64().unwrap();
        assert_eq!(
            row[1].as_u64(),
            pairs.get(&req).copied().flatten(),
            "{tag}: the call of line {req}"
        );
        let want = c["latencyMs"].as_f64().map(ms_text).unwrap_or_default();
        assert_eq!(row[2], want.as_str(), "{tag}: the latency of call {c}");
    }
    if let Some(c) = api_calls.iter().find(|c| {
        c["response"]
            .as_u64()
            .is_some_and(|r| lines[r as usize - 1].to_string().len() < 4000)
    }) {
        let (req, resp) = (
            c["request"].as_u64().unwrap(),
            c["response"].as_u64().unwrap(),
        );
        b.wait(&format!("tr.call[data-i=\"{}\"] td.num", c["i"]), SHOWN)
            .click();
        b.wait(".call-detail pre.payload", SHOWN);
        b.wait_until(
            "return document.querySelectorAll('.call-detail pre.payload').length === 2",
            SHOWN,
        );
        let sides = js(
            b,
            "return [...document.querySelectorAll('.call-detail pre.payload')].map(p => p.textContent)",
        );
        for (side, n) in sides.as_array().unwrap().iter().zip([req, resp]) {
            let shown: Value =
                serde_json::from_str(side.as_str().unwrap()).expect("a JSON payload");
            assert_eq!(
                shown,
                lines[n as usize - 1]["raw"],
                "{tag}: line {n} in the call's detail"
            );
        }
    }
    settle(b, &format!("calls-{tag}"));

    // Tools: the calls per tool are `reel stats`'s.
    let stats = v.api(&format!("stats?t={}", urlencode(k)));
    let tools = stats["tools"].as_array().cloned().unwrap_or_default();
    if tools.is_empty() {
        load(b, &page("tools"), "section.view h2");
        b.wait_until(
            "return document.querySelector('section.view').textContent.includes('No tool calls.')",
            SHOWN,
        );
    } else {
        load(b, &page("tools"), "table.tools tr[data-tool]");
        let shown = js(
            b,
            "return Object.fromEntries([...document.querySelectorAll('table.tools tr[data-tool]')].map(r => [r.dataset.tool, r.children[1].textContent]))",
        );
        let want: serde_json::Map<String, Value> = tools
            .iter()
            .map(|t| {
                (
                    t["name"].as_str().unwrap().to_owned(),
                    json!(num_text(t["calls"].as_u64().unwrap())),
                )
            })
            .collect();
        assert_eq!(shown, Value::Object(want), "{tag}: the tools table");
    }
    settle(b, &format!("tools-{tag}"));

    // Turns: one card per turn line.
    let turns: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l["type"] == "turn")
        .map(|(i, _)| i + 1)
        .collect();
    if turns.is_empty() {
        load(b, &page("turns"), "section.view .turns p.muted");
        let text = b.wait("section.view .turns", SHOWN).text();
        assert!(text.contains("No turns"), "{tag}: {text}");
    } else {
        load(b, &page("turns"), "article.turn");
        wait_count(b, "article.turn", turns.len());
        let ns = js(
            b,
            "return [...document.querySelectorAll('article.turn')].map(a => +a.dataset.n)",
        );
        assert_eq!(ns, json!(turns), "{tag}: the turn cards");
        let first_text = turns.iter().find_map(|&n| {
            lines[n - 1]["blocks"]
                .as_array()?
                .iter()
                .find(|bl| bl["type"] == "text")
                .and_then(|bl| bl["text"].as_str())
                .filter(|t| !t.is_empty())
                .map(|t| (n, t.to_owned()))
        });
        if let Some((n, text)) = first_text {
            let card = b
                .wait(&format!("article.turn[data-n=\"{n}\"]"), SHOWN)
                .text();
            let head: String = text
                .split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ");
            assert!(
                card.contains(&head),
                "{tag}: turn {n} shows {card:?}, not {head:?}"
            );
        }
    }
    settle(b, &format!("turns-{tag}"));

    // Events: the event lines, and a chip per kind.
    let events: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l["dir"] == "event")
        .map(|(i, _)| i + 1)
        .collect();
    let kinds: BTreeSet<String> = lines
        .iter()
        .filter(|l| l["dir"] == "event")
        .filter_map(|l| l["kind"].as_str().map(str::to_owned))
        .collect();
    load(b, &page("events"), ".chips");
    wait_count(b, "section.view tr.line[data-n]", events.len());
    let ns = js(
        b,
        "return [...document.querySelectorAll('section.view tr.line[data-n]')].map(r => +r.dataset.n)",
    );
    assert_eq!(ns, json!(events), "{tag}: the events view");
    let chips = js(
        b,
        "return [...document.querySelectorAll('.chips a[data-kind]')].map(a => a.dataset.kind)",
    );
    let chips: BTreeSet<String> = chips
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(chips, kinds, "{tag}: the event kinds");
    if let Some(&n) = events.first() {
        b.wait(&format!("tr.line[data-n=\"{n}\"]"), SHOWN).click();
        let pre = b.wait("tr.detail pre.payload", SHOWN).text();
        assert!(!pre.is_empty(), "{tag}: event line {n} opens");
    }
    settle(b, &format!("events-{tag}"));

    // Raw: every line as it is in the file.
    load(b, &page("raw"), "tr.raw[data-n]");
    wait_count(b, "tr.raw[data-n]", lines.len());
    let first = b.wait("tr.raw[data-n=\"1\"] code", SHOWN).text();
    let meta: Value = serde_json::from_str(&first).expect("the first raw line is JSON");
    assert_eq!(meta, lines[0], "{tag}: raw line 1");
    settle(b, &format!("raw-{tag}"));
}

/// `k` as a URL query value.
fn urlencode(k: &str) -> String {
    let mut out = String::new();
    for b in k.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[test]
fn every_view_of_a_stdio_session_shows_what_the_trace_holds() {
    let trace = stdio_trace();
    let v = Viewer::start(&[trace]);
    let b = Browser::start();
    tour(&b, &v, &key(trace), &lines_of(trace), "stdio");
}

#[test]
fn every_view_of_a_streamable_http_session_shows_what_the_trace_holds() {
    let trace = http_trace();
    let v = Viewer::start(&[trace]);
    let b = Browser::start();
    tour(&b, &v, &key(trace), &lines_of(trace), "http");
}

#[test]
fn every_view_of_an_llm_trace_shows_its_turns_and_events() {
    let trace = llm_trace();
    let lines = lines_of(trace);
    assert!(
        lines.iter().filter(|l| l["type"] == "turn").count() >= 4,
        "an llm trace has turns"
    );
    let v = Viewer::start(&[trace]);
    let b = Browser::start();
    tour(&b, &v, &key(trace), &lines, "llm");
    // A tool_use links to its tool_result and back, on the same view.
    let turns = v.page(&format!("trace={}&view=turns", key(trace)));
    load(&b, &turns, "article.turn");
    let link = b.wait(
        "article.turn:not(.echoed) .block.tool-result .pair-link",
        SHOWN,
    );
    let hash = js(&b, "return location.hash");
    link.click();
    b.wait_until(
        "return document.querySelector('.block.tool-use.flash') !== null",
        SHOWN,
    );
    assert_eq!(
        js(&b, "return location.hash"),
        hash,
        "the view stays the turns view"
    );
    b.wait(
        "article.turn:not(.echoed) .block.tool-use .pair-link",
        SHOWN,
    )
    .click();
    b.wait_until(
        "return document.querySelector('.block.tool-result.flash') !== null",
        SHOWN,
    );
    assert!(b.console_errors().is_empty());
    // The models table holds the turns `reel stats` counts.
    let stats = reel_json("stats", &[trace], &[0]);
    let v_stats = v.api(&format!("stats?t={}", key(trace)));
    assert_eq!(v_stats["models"], stats["models"]);
}

#[test]
fn an_mmsp_cache_shows_its_conversations_in_every_view_and_its_rfc_pages() {
    let cache = mmsp_cache();
    let v = Viewer::start(&[cache]);
    let b = Browser::start();
    // The app's first page is the cache's own listing, at the root.
    b.goto(&v.page(""));
    b.wait_until(&format!("return location.href === {:?}", v.url), SHOWN);
    b.wait("a[href]", SHOWN);
    settle(&b, "home-mmsp");
    // One conversation, against what `reel import` makes of it.
    let tmp = tempfile::tempdir().unwrap();
    let imported = tmp.path().join("conv.jsonl");
    let mut c = reel();
    c.args(["import", "-o"])
        .arg(&imported)
        .arg(cache.join("agent/conv.json"));
    let (code, out, err) = run(c);
    assert_eq!(code, Some(0), "reel import: {out}{err}");
    tour(&b, &v, "agent/conv.json", &lines_of(&imported), "mmsp");
    // The RFC's own pages, at the root.
    load(&b, &v.url, "a[href]");
    let links = js(
        &b,
        "return [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href'))",
    );
    assert!(links.to_string().contains("agent"), "{links}");
    settle(&b, "listing-mmsp");
    load(&b, &format!("{}agent/conv.json", v.url), "body");
    let text = js(&b, "return document.body.innerText");
    assert!(text.as_str().unwrap().contains("MMSP"), "{text}");
    settle(&b, "conversation-mmsp");
    // Its "Open in reel" link leads to the same conversation's timeline.
    let open = b.wait("a.button[href^=\"/_reel/#trace=\"]", SHOWN);
    let href = open.attr("href").unwrap_or_default();
    assert!(href.contains("conv.json"), "{href}");
    open.click();
    b.wait(".count-lines[data-n]", SHOWN);
    wait_count(&b, "tr.line[data-n]", lines_of(&imported).len());
}

#[test]
fn the_diff_of_two_runs_shows_reel_diffs_verdict_and_focuses_the_first_drift() {
    for (a, b_trace, tag) in [
        (stdio_trace(), stdio_trace_again(), "diff-again"),
        (stdio_trace(), http_trace(), "diff-http"),
    ] {
        let cli = reel_json("diff", &[a, b_trace], &[0, 1, 2]);
        let v = Viewer::start(&[a, b_trace]);
        let b = Browser::start();
        load(&b, &v.page(""), ".verdict[data-verdict]");
        let verdict = b.wait(".verdict[data-verdict]", SHOWN);
        assert_eq!(
            verdict.attr("data-verdict").as_deref(),
            cli["verdict"].as_str(),
            "{tag}: {cli}"
        );
        assert_eq!(
            verdict.attr("data-exit"),
            Some(cli["exitCode"].to_string()),
            "{tag}"
        );
        let drifts = cli["drifts"].as_array().cloned().unwrap_or_default();
        if tag == "diff-http" {
            assert!(!drifts.is_empty(), "stdio and HTTP sessions differ: {cli}");
        }
        wait_count(&b, ".drifts li.drift", drifts.len());
        if let Some(first) = drifts.first() {
            let focused = b.wait(".drifts li.drift.focused", SHOWN);
            assert_eq!(focused.attr("data-i").as_deref(), Some("0"), "{tag}");
            let heading = b.wait(".drift-detail h2", SHOWN).text();
            let subject = first["subject"]
                .as_str()
                .or(first["kind"].as_str())
                .unwrap_or_default();
            assert!(
                heading.starts_with(subject),
                "{tag}: {heading:?} vs {first}"
            );
            assert_eq!(b.find_all(".drifts li.drift.focused").len(), 1, "{tag}");
            b.wait(".drift-detail .sides pre.payload", SHOWN);
        } else {
            b.wait_until(
                "return document.querySelector('.drift-detail').textContent.includes('No drift')",
                SHOWN,
            );
        }
        settle(&b, tag);
    }
}

#[test]
fn a_merge_of_three_badges_each_line_and_keeps_pairs_within_their_trace() {
    let traces = [stdio_trace(), http_trace(), llm_trace()];
    let keys: Vec<String> = traces.iter().map(|t| key(t)).collect();
    let v = Viewer::start(&traces);
    let b = Browser::start();
    load(&b, &v.page(""), "tr.line[data-n]");
    let total: usize = traces.iter().map(|t| lines_of(t).len()).sum();
    wait_count(&b, "tr.line[data-n]", total);
    let rows = js(
        &b,
        "return [...document.querySelectorAll('tr.line[data-n]')].map(r => [r.querySelector('.badge.src').textContent, +r.dataset.n])",
    );
    let mut next: HashMap<String, u64> = HashMap::new();
    for row in rows.as_array().unwrap() {
        let (k, n) = (
            row[0].as_str().unwrap().to_owned(),
            row[1].as_u64().unwrap(),
        );
        assert!(keys.contains(&k), "a badge names {k}, not one of {keys:?}");
        let at = next.entry(k.clone()).or_insert(1);
        assert_eq!(n, *at, "{k}'s lines keep their order in the merge");
        *at += 1;
    }
    for (k, t) in keys.iter().zip(&traces) {
        assert_eq!(
            next.get(k).copied(),
            Some(lines_of(t).len() as u64 + 1),
            "all of {k}"
        );
    }
    // A response of the HTTP session names its own request, not the stdio one's.
    let http_lines = lines_of(traces[1]);
    let (_, pairs) = pair_by_hand(&http_lines);
    let (req, resp) = pairs
        .iter()
        .filter_map(|(&q, &r)| r.map(|r| (q, r)))
        .min()
        .unwrap();
    let index = js(
        &b,
        &format!(
            "return [...document.querySelectorAll('tr.line[data-n]')].findIndex(r => r.dataset.n === '{resp}' && r.querySelector('.badge.src').textContent === {:?})",
            keys[1]
        ),
    );
    let index = index.as_u64().expect("the response's row") as usize;
    b.find_all("tr.line[data-n]")[index].click();
    let link = b.wait("tr.detail .detail-tools a", SHOWN);
    let href = link.attr("href").unwrap_or_default();
    assert!(
        href.contains(&format!("trace={}", urlencode(&keys[1]))),
        "{href}"
    );
    assert!(href.contains(&format!("line={req}")), "{href}");
    assert!(
        link.text().contains(&format!("its request: line {req}")),
        "{}",
        link.text()
    );
    settle(&b, "merge");
}

/// Lines that share a `corr_id` are one group on the timeline: the first heads it and
/// counts the rest, which follow it marked as members; a line after the group is not.
#[test]
fn lines_sharing_a_corr_id_are_grouped_on_the_timeline() {
    use crate::harness::trace::{TraceBuilder, msg, rpc};
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("corr.jsonl");
    let with_corr = |v: Value, corr: &str| {
        let mut v = v;
        v["corr_id"] = json!(corr);
        v
    };
    TraceBuilder::new("corr")
        .lines([
            with_corr(
                msg("in", rpc::call(json!(1), "plan", json!({}))),
                "decision-1",
            ),
            with_corr(
                msg("out", rpc::result(json!(1), rpc::text("ok"))),
                "decision-1",
            ),
            with_corr(
                json!({"dir": "event", "kind": "rcan.decision", "text": "chose plan"}),
                "decision-1",
            ),
            msg("in", rpc::call(json!(2), "other", json!({}))),
        ])
        .write(&path);
    let v = Viewer::start(&[&path]);
    let b = Browser::start();
    load(
        &b,
        &v.page("trace=corr.jsonl&view=timeline"),
        "tr.line[data-n=\"5\"]",
    );
    let head = b.wait("tr.line.corr-head", SHOWN);
    assert_eq!(head.attr("data-n").as_deref(), Some("2"));
    assert_eq!(head.attr("data-members").as_deref(), Some("2"));
    let members: Vec<String> = b
        .find_all("tr.line.corr-member")
        .iter()
        .filter_map(|e| e.attr("data-n"))
        .collect();
    assert_eq!(members, ["3", "4"]);
    assert!(
        head.text().contains("decision-1"),
        "the group names its corr_id"
    );
    settle(&b, "timeline-corr");
}
