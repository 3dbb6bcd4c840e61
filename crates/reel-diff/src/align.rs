//! Content alignment: which exchange of A goes with which exchange of B.
//!
//! Exchanges pair by (direction, [`MatchKey`]) — the method and the params after the
//! shared normalisation — the earliest unpaired exchange of A with the earliest unpaired
//! exchange of B with the same key. Pairing happens when a request is read, so repeated
//! identical calls pair in request order whatever order their answers came in, and
//! reordered, pipelined or concurrent calls pair freely. A pair is compared once both
//! exchanges are done; what is left unpaired at the end was added or removed.
//!
//! Turns pair by role and order: the n-th assistant turn of A with the n-th assistant
//! turn of B. With --strict-notifications, notifications outside any call pair by
//! direction and position.
//!
//! The two sides are read in lockstep (batches of the same number of lines), so the
//! records waiting for their partner are about the lag between the two traces, not
//! their size.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use reel_mcp::normalize::MatchKey;

use crate::DiffError;
use crate::bodies::ValueRec;
use crate::compare::{self, Findings, Strictness};
use crate::payload::Payloads;
use crate::side::{DirKey, Event, ExRec, LooseRec, SideTotals, TurnRec};

type Key = (DirKey, MatchKey);

/// The aligner's maps are keyed by match keys (already 128-bit hashes) and sequence
/// numbers: a multiply-rotate hasher is enough, and much cheaper than SipHash.
#[derive(Default)]
struct FastHasher(u64);

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u128(&mut self, n: u128) {
        self.write_u64(n as u64);
        self.write_u64((n >> 64) as u64);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type Fast = BuildHasherDefault<FastHasher>;
type FastMap<K, V> = HashMap<K, V, Fast>;

/// The unpaired exchanges of one key, oldest first; one is kept inline (the common
/// case: most calls are unique).
enum Waiting {
    One(u64),
    Many(VecDeque<u64>),
}

/// Pairs records from the two sides and compares each pair.
pub(crate) struct Aligner {
    pub payloads: [Payloads; 2],
    pub findings: Findings,
    strict: Strictness,
    unmatched: [FastMap<Key, Waiting>; 2],
    partner: [FastMap<u64, u64>; 2],
    done: [FastMap<u64, Box<ExRec>>; 2],
    turns: [HashMap<Arc<str>, VecDeque<Box<TurnRec>>>; 2],
    loose: [HashMap<DirKey, VecDeque<Box<LooseRec>>>; 2],
    values: [HashMap<Arc<str>, VecDeque<Box<ValueRec>>>; 2],
}

impl Aligner {
    pub(crate) fn new(payloads: [Payloads; 2], strict: Strictness, keep_passed: bool) -> Aligner {
        Aligner {
            payloads,
            findings: Findings {
                passed: keep_passed.then(Vec::new),
                ..Findings::default()
            },
            strict,
            unmatched: Default::default(),
            partner: Default::default(),
            done: Default::default(),
            turns: Default::default(),
            loose: Default::default(),
            values: Default::default(),
        }
    }

    /// Applies one event of side `s` (0 = A, 1 = B).
    pub(crate) fn event(&mut self, s: usize, ev: Event) -> Result<(), DiffError> {
        let o = 1 - s;
        match ev {
            Event::Open { seq, dir, key } => self.open(s, seq, (DirKey::of(dir), key)),
            Event::Done(rec) => self.done(s, rec)?,
            Event::Turn(t) => match self.turns[o].get_mut(&t.role).and_then(VecDeque::pop_front) {
                Some(other) => {
                    let (a, b) = if s == 0 { (&t, &other) } else { (&other, &t) };
                    compare::turns(a, b, &mut self.payloads, self.strict, &mut self.findings)?;
                }
                None => self.turns[s]
                    .entry(t.role.clone())
                    .or_default()
                    .push_back(t),
            },
            Event::Value(v) => match self.values[o].get_mut(&v.key).and_then(VecDeque::pop_front) {
                Some(other) => {
                    let (a, b) = if s == 0 { (&v, &other) } else { (&other, &v) };
                    compare::values(a, b, &self.payloads, &mut self.findings);
                }
                None => self.values[s]
                    .entry(v.key.clone())
                    .or_default()
                    .push_back(v),
            },
            Event::Loose(n) => {
                let dk = DirKey::of(n.dir);
                match self.loose[o].get_mut(&dk).and_then(VecDeque::pop_front) {
                    Some(other) => {
                        let (a, b) = if s == 0 { (&n, &other) } else { (&other, &n) };
                        compare::loose(a, b, &mut self.payloads, &mut self.findings)?;
                    }
                    None => self.loose[s].entry(dk).or_default().push_back(n),
                }
            }
        }
        Ok(())
    }

    /// Side `s` sent request `seq` under match key `key`: it pairs with the first
    /// request of the other side waiting under that key, or waits for one.
    fn open(&mut self, s: usize, seq: u64, key: Key) {
        let o = 1 - s;
        match self.take_waiting(o, &key) {
            Some(theirs) => {
                self.partner[s].insert(seq, theirs);
                self.partner[o].insert(theirs, seq);
            }
            None => match self.unmatched[s].get_mut(&key) {
                Some(Waiting::Many(q)) => q.push_back(seq),
                Some(w) => {
                    if let Waiting::One(first) = *w {
                        *w = Waiting::Many(VecDeque::from([first, seq]));
                    }
                }
                None => {
                    self.unmatched[s].insert(key, Waiting::One(seq));
                }
            },
        }
    }

    /// The first request of side `s` waiting under `key`, no longer waiting.
    fn take_waiting(&mut self, s: usize, key: &Key) -> Option<u64> {
        match self.unmatched[s].get_mut(key) {
            Some(Waiting::Many(q)) if q.len() > 1 => q.pop_front(),
            Some(Waiting::Many(q)) => {
                let front = q.pop_front();
                self.unmatched[s].remove(key);
                front
            }
            Some(Waiting::One(_)) => match self.unmatched[s].remove(key) {
                Some(Waiting::One(seq)) => Some(seq),
                _ => None,
            },
            None => None,
        }
    }

    /// Side `s` finished exchange `rec`: compared when its partner's is finished too,
    /// else kept until it is.
    fn done(&mut self, s: usize, rec: Box<ExRec>) -> Result<(), DiffError> {
        let o = 1 - s;
        let Some(&theirs) = self.partner[s].get(&rec.seq) else {
            self.done[s].insert(rec.seq, rec);
            return Ok(());
        };
        let Some(other) = self.done[o].remove(&theirs) else {
            self.done[s].insert(rec.seq, rec);
            return Ok(());
        };
        self.partner[s].remove(&rec.seq);
        self.partner[o].remove(&theirs);
        let (a, b) = if s == 0 {
            (&rec, &other)
        } else {
            (&other, &rec)
        };
        compare::exchanges(a, b, &mut self.payloads, &mut self.findings)
    }

    /// Both sides are read: what is left unpaired was added or removed; unsolicited
    /// messages compare as counts.
    pub(crate) fn finish(&mut self, totals: [&SideTotals; 2]) {
        for s in 0..2 {
            let mut left: Vec<Box<ExRec>> = self.done[s].drain().map(|(_, r)| r).collect();
            left.sort_by_key(|r| r.seq);
            for r in &left {
                compare::unpaired(s, r, &self.payloads, &mut self.findings);
            }
            let mut turns: Vec<Box<TurnRec>> = self.turns[s].drain().flat_map(|(_, q)| q).collect();
            turns.sort_by_key(|t| (t.loc.file, t.loc.line));
            for t in &turns {
                compare::unpaired_turn(s, t, &self.payloads, &mut self.findings);
            }
            let mut values: Vec<Box<ValueRec>> =
                self.values[s].drain().flat_map(|(_, q)| q).collect();
            values.sort_by_key(|v| (v.loc.file, v.loc.line));
            for v in &values {
                compare::unpaired_value(s, v, &self.payloads, &mut self.findings);
            }
            let mut loose: Vec<Box<LooseRec>> =
                self.loose[s].drain().flat_map(|(_, q)| q).collect();
            loose.sort_by_key(|n| (n.loc.file, n.loc.line));
            for n in &loose {
                compare::unpaired_loose(s, n, &self.payloads, &mut self.findings);
            }
        }
        compare::counts(
            &totals[0].counts,
            &totals[1].counts,
            self.strict.notifications,
            &self.payloads,
            &mut self.findings,
        );
    }
}

#[cfg(test)]
mod tests {
    //! The aligner and the comparer on their own: each side's records come from
    //! `side::read_side` on a small trace, and are fed in the orders the two reader
    //! threads can produce.

    use std::sync::mpsc;

    use reel_mcp::drift::Kind;
    use reel_mcp::normalize::Normalizer;

    use super::*;
    use crate::payload::Prep;
    use crate::side::{self, NotificationRules};

    const META: &str = r#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z"}"#;

    /// One side's events, its totals and payload reader (the temp dir kept alive).
    struct Side {
        events: Vec<Event>,
        totals: SideTotals,
        payloads: Payloads,
        _dir: tempfile::TempDir,
    }

    fn side(lines: &[String]) -> Side {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut text = format!("{META}\n");
        for l in lines {
            text.push_str(l);
            text.push('\n');
        }
        std::fs::write(&path, text).unwrap();
        let prep = Prep::new(Normalizer::new(), None);
        let rules = NotificationRules {
            in_place: false,
            counts: Default::default(),
        };
        let (tx, rx) = mpsc::sync_channel(4);
        let (_back, recycle) = mpsc::channel();
        let (totals, events) = std::thread::scope(|s| {
            let reader = s.spawn(|| side::read_side(&path, prep.clone(), rules, tx, recycle));
            let events: Vec<Event> = rx.iter().flat_map(|b| b.events).collect();
            (reader.join().unwrap().unwrap(), events)
        });
        let payloads = Payloads::new(vec![path], prep);
        Side {
            events,
            totals,
            payloads,
            _dir: dir,
        }
    }

    #[derive(Clone, Copy, Debug)]
    enum Order {
        /// One event of each side in turn.
        Interleaved,
        /// All of A, then all of B (B's reader lagging far behind).
        AFirst,
        BFirst,
    }

    fn align(a: Side, b: Side, order: Order) -> Findings {
        let mut al = Aligner::new(
            [a.payloads, b.payloads],
            Strictness {
                usage: false,
                notifications: Default::default(),
            },
            false,
        );
        let feed: Vec<(usize, Event)> = match order {
            Order::AFirst => (a.events.into_iter().map(|e| (0, e)))
                .chain(b.events.into_iter().map(|e| (1, e)))
                .collect(),
            Order::BFirst => (b.events.into_iter().map(|e| (1, e)))
                .chain(a.events.into_iter().map(|e| (0, e)))
                .collect(),
            Order::Interleaved => {
                let (mut ia, mut ib) = (a.events.into_iter(), b.events.into_iter());
                let mut v = Vec::new();
                loop {
                    let (x, y) = (ia.next(), ib.next());
                    if x.is_none() && y.is_none() {
                        break v;
                    }
                    v.extend(x.map(|e| (0, e)));
                    v.extend(y.map(|e| (1, e)));
                }
            }
        };
        for (s, ev) in feed {
            al.event(s, ev).unwrap();
        }
        al.finish([&a.totals, &b.totals]);
        al.findings
    }

    const ORDERS: [Order; 3] = [Order::Interleaved, Order::AFirst, Order::BFirst];

    fn call(id: u64, tool: &str, args: &str) -> String {
        format!(
            r#"{{"t":"2026-01-01T00:00:00.001Z","dir":"in","raw":{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{args}}}}}}}"#
        )
    }

    fn answer(id: u64, text: &str) -> String {
        format!(
            r#"{{"t":"2026-01-01T00:00:00.002Z","dir":"out","raw":{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{text}"}}]}}}}}}"#
        )
    }

    fn kinds(f: &Findings) -> Vec<Kind> {
        f.drifts.iter().map(|d| d.kind).collect()
    }

    #[test]
    fn reordered_calls_pair_by_content_under_every_feed_order() {
        let a = || {
            side(&[
                call(1, "add", r#"{"a":1}"#),
                answer(1, "1"),
                call(2, "add", r#"{"a":2}"#),
                answer(2, "2"),
            ])
        };
        let b = || {
            side(&[
                call(7, "add", r#"{"a":2}"#),
                answer(7, "2"),
                call(8, "add", r#"{"a":1}"#),
                answer(8, "1"),
            ])
        };
        for order in ORDERS {
            let f = align(a(), b(), order);
            assert_eq!((f.paired, f.identical), (2, 2), "{order:?}");
            assert!(f.drifts.is_empty(), "{order:?}: {:?}", kinds(&f));
        }
    }

    #[test]
    fn identical_calls_pair_in_request_order_whatever_order_their_answers_came_in() {
        let requests = || vec![call(1, "n", "{}"), call(2, "n", "{}")];
        let mut a_lines = requests();
        a_lines.extend([answer(1, "first"), answer(2, "second")]);
        // Answered the other way round, each with its own request's answer.
        let mut b_lines = requests();
        b_lines.extend([answer(2, "second"), answer(1, "first")]);
        for order in ORDERS {
            let f = align(side(&a_lines), side(&b_lines), order);
            assert_eq!((f.paired, f.identical), (2, 2), "{order:?}");
        }
        // The first request now gets the second answer: both pairs drift.
        let mut swapped = requests();
        swapped.extend([answer(1, "second"), answer(2, "first")]);
        for order in ORDERS {
            let f = align(side(&a_lines), side(&swapped), order);
            assert_eq!(
                kinds(&f),
                [Kind::ResultChanged, Kind::ResultChanged],
                "{order:?}"
            );
            assert_eq!((f.output, f.structural), (2, 0));
        }
    }

    #[test]
    fn what_only_one_side_has_is_removed_or_added() {
        let a = side(&[call(1, "x", "{}"), answer(1, "x"), call(2, "same", "{}")]);
        let b = side(&[call(1, "same", "{}"), call(2, "y", "{}"), answer(2, "y")]);
        let f = align(a, b, Order::Interleaved);
        assert_eq!((f.paired, f.removed, f.added), (1, 1, 1));
        assert_eq!(kinds(&f), [Kind::Removed, Kind::Added]);
        assert_eq!(f.structural, 2);
        // The pair without answers on either side is no drift.
        assert_eq!(f.identical, 1);
    }

    #[test]
    fn an_answer_that_becomes_an_error_is_structural_and_names_the_call() {
        let a = side(&[call(1, "weather", "{}"), answer(1, "sunny")]);
        let b = side(&[
            call(1, "weather", "{}"),
            r#"{"t":"2026-01-01T00:00:00.002Z","dir":"out","raw":{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}}"#.to_owned(),
        ]);
        let f = align(a, b, Order::BFirst);
        assert_eq!(kinds(&f), [Kind::BecameError]);
        assert_eq!(f.structural, 1);
        assert_eq!(f.drifts[0].subject, "tools/call weather");
        assert_eq!(f.drifts[0].b.as_ref().map(|p| p.line), Some(2));
    }

    fn tools_list(id: u64, tools: &str) -> [String; 2] {
        [
            format!(
                r#"{{"t":"2026-01-01T00:00:00.001Z","dir":"in","raw":{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}}}"#
            ),
            format!(
                r#"{{"t":"2026-01-01T00:00:00.002Z","dir":"out","raw":{{"jsonrpc":"2.0","id":{id},"result":{{"tools":{tools}}}}}}}"#
            ),
        ]
    }

    #[test]
    fn a_tool_list_change_is_output_drift_unless_a_schema_changed() {
        let base = r#"[{"name":"w","description":"weather","inputSchema":{"type":"object"}}]"#;
        let described =
            r#"[{"name":"w","description":"the weather","inputSchema":{"type":"object"}}]"#;
        let schema = r#"[{"name":"w","description":"weather","inputSchema":{"type":"string"}}]"#;
        let f = align(
            side(&tools_list(1, base)),
            side(&tools_list(5, described)),
            Order::AFirst,
        );
        assert_eq!(kinds(&f), [Kind::ListChanged]);
        assert_eq!(
            f.drifts[0].changelog.as_ref().map(|c| c.entries.len()),
            Some(1)
        );
        let f = align(
            side(&tools_list(1, base)),
            side(&tools_list(5, schema)),
            Order::AFirst,
        );
        assert_eq!(kinds(&f), [Kind::SchemaChanged]);
        assert_eq!(f.structural, 1);
        assert_eq!(f.drifts[0].pointers, ["/result/tools/0/inputSchema/type"]);
    }
}
