//! The matcher: which recorded exchange answers a live request (DESIGN "Replay
//! semantics").
//!
//! - Default: the earliest *unconsumed* recorded client exchange with the same method and
//!   equal params after normalisation. Identical repeated calls therefore consume their
//!   recorded answers in order, and reordered or concurrent calls match freely.
//! - A request that only reads one of the server's lists
//!   ([`reel_mcp::jsonrpc::methods::LIST_READS`]) whose equal recorded requests are all
//!   used up is answered again from the last of them ([`Lookup::Again`]): clients re-list
//!   as their timing makes them, and a list read changes nothing on the server.
//! - `--strict`: the live request must equal the next unconsumed recorded request in
//!   recorded order (mcporter's semantics); nothing is answered twice.
//! - A 2026-07-28 retry (`params.inputResponses`) whose answers differ from the recorded
//!   retry's still finds it through its second key (params without `inputResponses`):
//!   that is client drift, not a miss.
//!
//! [`Tape`] is fed the index's [`Update`]s as they arrive and only ever holds positions
//! and keys. While the index is still reading, a request that finds nothing yet is told
//! to wait ([`Lookup::NotYet`]): the earliest match may be further down the file.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

use reel_mcp::jsonrpc::methods::{self, RequestClass};
use reel_mcp::normalize::MatchKey;
use reel_trace::Dir;
use reel_trace::line::Meta;

use crate::tape::types::{HttpFact, IdSplice, IndexEnd, Item, LineLoc, Update, Via};

/// One matching rule: data that `reel play --help` lists and tests exercise one by one
/// (the tests of this module and of the tape server are named after them).
#[derive(Clone, Copy, Debug)]
pub struct MatchRule {
    /// Short stable name.
    pub name: &'static str,
    /// The methods it is about; empty: every request.
    pub methods: &'static [&'static str],
    /// What it does, one line.
    pub description: &'static str,
    /// It applies with `--strict` too.
    pub strict: bool,
}

static MATCH_RULES: [MatchRule; 5] = [
    MatchRule {
        name: "content",
        methods: &[],
        description: "the earliest unused recorded request with the same method and equal params after normalisation answers, in any order (--strict: the next one in recorded order)",
        strict: true,
    },
    MatchRule {
        name: "repeats",
        methods: &[],
        description: "identical repeated requests take their recorded answers in recorded order",
        strict: true,
    },
    MatchRule {
        name: "answer-again",
        methods: &methods::LIST_READS,
        description: "only read lists: past the equal recorded ones (cursor included), the last answer again (not a miss: \"answered again\")",
        strict: false,
    },
    MatchRule {
        name: "generic",
        methods: &methods::ANSWERED_ALIKE,
        description: "an empty result when the tape holds none",
        strict: false,
    },
    MatchRule {
        name: "discover-refusal",
        methods: &[methods::SERVER_DISCOVER],
        description: "on a tape of a legacy-only client: -32601, as a legacy server answers (the client falls back)",
        strict: false,
    },
];

/// The matching rules, in the order they are tried.
#[cfg(test)]
pub fn match_rules() -> &'static [MatchRule] {
    &MATCH_RULES
}

/// The matching rules as text for `--help`: one `  name  [methods:] description` line
/// each, marking those `--strict` turns off.
pub fn match_rules_help() -> String {
    reel_report::display::rule_table(MATCH_RULES.iter().map(|r| {
        let methods = match r.methods {
            [] => String::new(),
            m => format!("{}: ", m.join(", ")),
        };
        let strict = if r.strict { "" } else { " (not with --strict)" };
        (r.name, format!("{methods}{}{strict}", r.description))
    }))
}

/// A response as indexed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recorded {
    /// Where it is.
    pub at: LineLoc,
    /// Its position among the session's messages.
    pub seq: u64,
    /// Recorded time (ms).
    pub t: i64,
    /// Where the raw and its id are (responses read the common way).
    pub splice: Option<IdSplice>,
    /// How it travelled (HTTP recordings).
    pub via: Via,
}

/// One recorded exchange (a request of either side and what belongs to it).
#[derive(Clone, Debug)]
pub struct RecExchange {
    /// Index into [`Tape::method_name`].
    pub method: u32,
    /// Match key (client requests).
    pub key: Option<MatchKey>,
    /// Match key without `params.inputResponses` (2026-07-28 retries).
    pub alt_key: Option<MatchKey>,
    /// The request.
    pub request: Recorded,
    /// The response, once indexed.
    pub response: Option<Recorded>,
    /// Server messages that came while it was open, in order.
    pub attached: Vec<Item>,
    /// The recorded client cancelled it.
    pub cancelled: bool,
    /// A live request took it.
    pub consumed: bool,
}

/// The answer of [`Tape::find`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// This exchange answers.
    Found(u32),
    /// This exchange answers, but the client's `inputResponses` differ from the recorded
    /// ones (client drift).
    FoundWithDrift(u32),
    /// This exchange, already used, answers again: a list read past its recorded answers.
    Again(u32),
    /// Nothing indexed yet; the rest of the tape may hold it.
    NotYet,
    /// The tape cannot answer.
    None,
}

/// Match keys are hashes already: the tables use their low bits as they are.
#[derive(Default)]
struct KeyBits(u64);

impl Hasher for KeyBits {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u128(&mut self, v: u128) {
        self.0 ^= v as u64 ^ (v >> 64) as u64;
    }
}

type KeyMap<V> = HashMap<MatchKey, V, BuildHasherDefault<KeyBits>>;

/// The exchanges that share a key, in recorded order (consumed ones dropped from the
/// front, but never the last: it may answer again). Most keys have one, kept inline: no
/// allocation, and one memory access less per lookup.
#[derive(Debug)]
enum Slot {
    One(u32),
    Many(VecDeque<u32>),
}

impl Slot {
    fn push(&mut self, i: u32) {
        match self {
            Slot::One(first) => *self = Slot::Many(VecDeque::from([*first, i])),
            Slot::Many(q) => q.push_back(i),
        }
    }

    fn last(&self) -> Option<u32> {
        match self {
            Slot::One(i) => Some(*i),
            Slot::Many(q) => q.back().copied(),
        }
    }
}

/// The indexed tape, as the server sees it.
#[derive(Default)]
pub struct Tape {
    exchanges: Vec<RecExchange>,
    methods: Vec<String>,
    method_ids: HashMap<String, u32>,
    by_key: KeyMap<Slot>,
    by_alt: KeyMap<Slot>,
    by_method: HashMap<u32, Vec<u32>>,
    order: Vec<u32>,
    cursor: usize,
    notifications: KeyMap<VecDeque<u64>>,
    unsolicited: VecDeque<(Option<u64>, Item)>,
    meta: Option<Box<Meta>>,
    http: Vec<HttpFact>,
    end: Option<IndexEnd>,
    warnings: Vec<String>,
}

impl Tape {
    /// An empty tape.
    pub fn new() -> Tape {
        Tape::default()
    }

    /// Applies one update of the index.
    pub fn apply(&mut self, u: Update) {
        match u {
            Update::Meta(m) => self.meta = Some(m),
            Update::Opened(o) => {
                debug_assert_eq!(o.exchange as usize, self.exchanges.len());
                let method = self.intern(&o.method);
                let idx = self.exchanges.len() as u32;
                if o.dir == Dir::In {
                    if let Some(k) = o.key {
                        add_to_slot(&mut self.by_key, k, idx);
                    }
                    if let Some(k) = o.alt_key {
                        add_to_slot(&mut self.by_alt, k, idx);
                    }
                    self.by_method.entry(method).or_default().push(idx);
                    self.order.push(idx);
                }
                self.exchanges.push(RecExchange {
                    method,
                    key: o.key,
                    alt_key: o.alt_key,
                    request: Recorded {
                        at: o.at,
                        seq: o.seq,
                        t: o.t,
                        splice: None,
                        via: Via::default(),
                    },
                    response: None,
                    attached: Vec::new(),
                    cancelled: false,
                    consumed: false,
                });
            }
            Update::Closed {
                exchange,
                at,
                seq,
                t,
                splice,
                via,
            } => {
                if let Some(e) = self.exchanges.get_mut(exchange as usize) {
                    e.response = Some(Recorded {
                        at,
                        seq,
                        t,
                        splice,
                        via,
                    });
                }
            }
            Update::Attached { exchange, item } => {
                if let Some(e) = self.exchanges.get_mut(exchange as usize) {
                    // In recorded order: a notification that waited for the answer it
                    // precedes arrives after items recorded later (see the indexer).
                    let at = e.attached.partition_point(|i| i.seq <= item.seq);
                    e.attached.insert(at, item);
                }
            }
            Update::Cancelled { exchange } => {
                if let Some(e) = self.exchanges.get_mut(exchange as usize) {
                    e.cancelled = true;
                }
            }
            Update::ClientNotification { seq, key } => {
                self.notifications.entry(key).or_default().push_back(seq);
            }
            Update::Unsolicited { anchor, item } => self.unsolicited.push_back((anchor, item)),
            Update::Http(fact) => self.http.push(fact),
            Update::Warning(w) => self.warnings.push(w),
            Update::Done(end) => self.end = Some(end),
        }
    }

    fn intern(&mut self, m: &str) -> u32 {
        if let Some(&i) = self.method_ids.get(m) {
            return i;
        }
        let i = self.methods.len() as u32;
        self.methods.push(m.to_owned());
        self.method_ids.insert(m.to_owned(), i);
        i
    }

    /// True once the whole tape is indexed.
    pub fn complete(&self) -> bool {
        self.end.is_some()
    }

    /// The meta line of the selected session, once read.
    pub fn meta(&self) -> Option<&Meta> {
        self.meta.as_deref()
    }

    /// Warnings of the index not yet taken.
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// Exchange `i`.
    pub fn exchange(&self, i: u32) -> &RecExchange {
        &self.exchanges[i as usize]
    }

    /// All exchanges indexed so far.
    pub fn exchanges(&self) -> &[RecExchange] {
        &self.exchanges
    }

    /// A method's name.
    pub fn method_name(&self, id: u32) -> &str {
        self.methods.get(id as usize).map_or("", String::as_str)
    }

    /// True when some recorded client request has this method.
    pub fn has_method(&self, method: &str) -> bool {
        self.method_ids
            .get(method)
            .is_some_and(|m| self.by_method.contains_key(m))
    }

    /// The recorded client exchanges with this method, in order.
    pub fn candidates(&self, method: &str) -> &[u32] {
        self.method_ids
            .get(method)
            .and_then(|m| self.by_method.get(m))
            .map_or(&[], Vec::as_slice)
    }

    /// The client exchange that answers a live request with this key, per the matching
    /// rules; `strict` requires recorded order.
    pub fn find(&mut self, key: MatchKey, alt_key: Option<MatchKey>, strict: bool) -> Lookup {
        if strict {
            return self.find_strict(key, alt_key);
        }
        if let Some(i) = front_unconsumed(&mut self.by_key, key, &self.exchanges) {
            return Lookup::Found(i);
        }
        if let Some(alt) = alt_key {
            if let Some(i) = front_unconsumed(&mut self.by_alt, alt, &self.exchanges) {
                return Lookup::FoundWithDrift(i);
            }
        }
        if !self.complete() {
            return Lookup::NotYet;
        }
        match self.answer_again(key) {
            Some(i) => Lookup::Again(i),
            None => Lookup::None,
        }
    }

    /// How many recorded exchanges with this key no live request has taken yet.
    pub fn unconsumed_with_key(&self, key: MatchKey) -> usize {
        match self.by_key.get(&key) {
            Some(Slot::One(i)) => usize::from(!self.exchanges[*i as usize].consumed),
            Some(Slot::Many(q)) => q
                .iter()
                .filter(|&&i| !self.exchanges[i as usize].consumed)
                .count(),
            None => 0,
        }
    }

    /// The last recorded exchange with this key, when it is a list read that was
    /// answered and can answer again.
    fn answer_again(&self, key: MatchKey) -> Option<u32> {
        let i = self.by_key.get(&key)?.last()?;
        let e = &self.exchanges[i as usize];
        let list_read =
            methods::request_class(self.method_name(e.method)) == RequestClass::ListRead;
        (list_read && e.consumed && e.response.is_some()).then_some(i)
    }

    fn find_strict(&mut self, key: MatchKey, alt_key: Option<MatchKey>) -> Lookup {
        while self
            .order
            .get(self.cursor)
            .is_some_and(|&i| self.exchanges[i as usize].consumed)
        {
            self.cursor += 1;
        }
        let Some(&next) = self.order.get(self.cursor) else {
            return if self.complete() {
                Lookup::None
            } else {
                Lookup::NotYet
            };
        };
        let e = &self.exchanges[next as usize];
        if e.key == Some(key) {
            Lookup::Found(next)
        } else if alt_key.is_some() && e.alt_key == alt_key {
            Lookup::FoundWithDrift(next)
        } else {
            Lookup::None
        }
    }

    /// The next recorded client request in order (what `--strict` expects).
    pub fn next_in_order(&self) -> Option<u32> {
        self.order[self.cursor.min(self.order.len())..]
            .iter()
            .copied()
            .find(|&i| !self.exchanges[i as usize].consumed)
    }

    /// Marks an exchange as taken by a live request.
    pub fn consume(&mut self, i: u32) {
        if let Some(e) = self.exchanges.get_mut(i as usize) {
            e.consumed = true;
        }
    }

    /// Takes the earliest recorded client notification equal to a live one; returns its
    /// position (the client has come that far).
    pub fn match_notification(&mut self, key: MatchKey) -> Option<u64> {
        self.notifications.get_mut(&key)?.pop_front()
    }

    /// The next unsolicited server message, if any.
    pub fn peek_unsolicited(&self) -> Option<&(Option<u64>, Item)> {
        self.unsolicited.front()
    }

    /// Removes the next unsolicited message.
    pub fn pop_unsolicited(&mut self) -> Option<(Option<u64>, Item)> {
        self.unsolicited.pop_front()
    }

    /// Unsolicited messages never sent.
    pub fn unsent_unsolicited(&self) -> usize {
        self.unsolicited.len()
    }

    /// Recorded client exchanges no live request took, in order.
    pub fn unused(&self) -> impl Iterator<Item = u32> + '_ {
        self.order
            .iter()
            .copied()
            .filter(|&i| !self.exchanges[i as usize].consumed)
    }
}

fn add_to_slot(table: &mut KeyMap<Slot>, key: MatchKey, i: u32) {
    match table.get_mut(&key) {
        Some(slot) => slot.push(i),
        None => {
            table.insert(key, Slot::One(i));
        }
    }
}

fn front_unconsumed(
    table: &mut KeyMap<Slot>,
    key: MatchKey,
    exchanges: &[RecExchange],
) -> Option<u32> {
    match table.get_mut(&key)? {
        Slot::One(i) => (!exchanges[*i as usize].consumed).then_some(*i),
        Slot::Many(q) => {
            while let Some(&i) = q.front() {
                if !exchanges[i as usize].consumed {
                    return Some(i);
                }
                if q.len() == 1 {
                    return None;
                }
                q.pop_front();
            }
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tape::types::Opened;

    fn loc(line: u64) -> LineLoc {
        LineLoc {
            file: 0,
            len: 1,
            offset: line,
            line,
        }
    }

    fn open(tape: &mut Tape, method: &str, key: u128, alt: Option<u128>) -> u32 {
        let n = tape.exchanges().len() as u32;
        tape.apply(Update::Opened(Opened {
            exchange: n,
            dir: Dir::In,
            method: method.into(),
            key: Some(MatchKey(key)),
            alt_key: alt.map(MatchKey),
            at: loc(n as u64),
            seq: n as u64,
            t: 0,
            parent: None,
        }));
        n
    }

    /// Every rule is listed in `--help`, with its methods.
    #[test]
    fn the_help_lists_every_matching_rule() {
        let help = match_rules_help();
        for r in match_rules() {
            assert!(help.contains(&format!("  {} ", r.name)), "{help}");
            for m in r.methods {
                assert!(help.contains(m), "{help}");
            }
        }
        assert!(
            help.contains("tools/list, prompts/list, resources/list"),
            "{help}"
        );
        // Descriptions wrap: count in the text with its line breaks folded.
        let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(flat.matches("(not with --strict)").count(), 3, "{help}");
    }

    /// Rules `content` and `repeats`.
    #[test]
    fn earliest_unconsumed_and_repeats_in_order() {
        let mut t = Tape::new();
        open(&mut t, "tools/call", 1, None);
        open(&mut t, "tools/call", 2, None);
        open(&mut t, "tools/call", 1, None);
        // Out of order: the call recorded second answers first.
        assert_eq!(t.find(MatchKey(2), None, false), Lookup::Found(1));
        t.consume(1);
        // Identical calls take their answers in recorded order.
        assert_eq!(t.find(MatchKey(1), None, false), Lookup::Found(0));
        t.consume(0);
        assert_eq!(t.find(MatchKey(1), None, false), Lookup::Found(2));
        t.consume(2);
        // Exhausted while the index is still reading: wait; once complete: a miss.
        assert_eq!(t.find(MatchKey(1), None, false), Lookup::NotYet);
        t.apply(Update::Done(IndexEnd::default()));
        assert_eq!(t.find(MatchKey(1), None, false), Lookup::None);
        assert_eq!(t.unused().count(), 0);
    }

    fn close(tape: &mut Tape, exchange: u32) {
        tape.apply(Update::Closed {
            exchange,
            at: loc(100 + exchange as u64),
            seq: 100 + exchange as u64,
            t: 0,
            splice: None,
            via: Via::default(),
        });
    }

    /// Rule `answer-again`: a list read whose recorded answers are used up takes the
    /// last equal one again, once the whole tape is known; other methods, other params
    /// (another cursor) and --strict do not.
    #[test]
    fn list_reads_are_answered_again_from_their_last_answer() {
        let mut t = Tape::new();
        let first = open(&mut t, "tools/list", 1, None);
        let page2 = open(&mut t, "tools/list", 2, None);
        let last = open(&mut t, "tools/list", 1, None);
        let call = open(&mut t, "tools/call", 3, None);
        for i in [first, page2, last, call] {
            close(&mut t, i);
        }
        for (i, key) in [(first, 1), (last, 1), (call, 3)] {
            assert_eq!(t.find(MatchKey(key), None, false), Lookup::Found(i));
            t.consume(i);
        }
        // The tape may still hold another equal request further down.
        assert_eq!(t.find(MatchKey(1), None, false), Lookup::NotYet);
        t.apply(Update::Done(IndexEnd::default()));
        assert_eq!(t.find(MatchKey(1), None, false), Lookup::Again(last));
        assert_eq!(t.find(MatchKey(1), None, false), Lookup::Again(last));
        // Another page is another key: it has its own recorded answer, unused yet.
        assert_eq!(t.find(MatchKey(2), None, false), Lookup::Found(page2));
        assert_eq!(t.find(MatchKey(3), None, false), Lookup::None, "tools/call");
        assert_eq!(t.find(MatchKey(1), None, true), Lookup::None, "--strict");
        assert_eq!(t.find(MatchKey(9), None, false), Lookup::None);
    }

    /// A list read the recorded server never answered does not answer again.
    #[test]
    fn an_unanswered_list_read_is_not_answered_again() {
        let mut t = Tape::new();
        let i = open(&mut t, "prompts/list", 1, None);
        t.consume(i);
        t.apply(Update::Done(IndexEnd::default()));
        assert_eq!(t.find(MatchKey(1), None, false), Lookup::None);
    }

    #[test]
    fn strict_requires_recorded_order() {
        let mut t = Tape::new();
        open(&mut t, "a", 1, None);
        open(&mut t, "b", 2, None);
        t.apply(Update::Done(IndexEnd::default()));
        assert_eq!(t.find(MatchKey(2), None, true), Lookup::None);
        assert_eq!(t.find(MatchKey(1), None, true), Lookup::Found(0));
        t.consume(0);
        assert_eq!(t.next_in_order(), Some(1));
        assert_eq!(t.find(MatchKey(2), None, true), Lookup::Found(1));
    }

    #[test]
    fn retries_with_other_answers_are_drift() {
        let mut t = Tape::new();
        open(&mut t, "tools/call", 10, None);
        open(&mut t, "tools/call", 11, Some(12));
        assert_eq!(
            t.find(MatchKey(99), Some(MatchKey(12)), false),
            Lookup::FoundWithDrift(1)
        );
        assert_eq!(
            t.find(MatchKey(11), Some(MatchKey(12)), false),
            Lookup::Found(1)
        );
        assert_eq!(t.candidates("tools/call"), &[0, 1]);
        assert!(t.has_method("tools/call"));
        assert!(!t.has_method("ping"));
    }

    // ---- matching real requests: keys made by the indexer and by the live scan -----

    const META: &str = r#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z"}"#;

    fn pointers(ignore: &[&str]) -> Vec<reel_mcp::normalize::Pointer> {
        ignore
            .iter()
            .map(|p| reel_mcp::normalize::Pointer::parse(p).unwrap())
            .collect()
    }

    /// The tape the server gets from these recorded `raw` messages (client requests
    /// `in`, everything else `out`), wholly indexed.
    fn indexed(raws: &[&str], ignore: &[&str]) -> Tape {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut text = format!("{META}\n");
        for raw in raws {
            let dir = if raw.contains(r#""method""#) && raw.contains(r#""id""#) {
                "in"
            } else {
                "out"
            };
            text.push_str(&format!(
                r#"{{"t":"2026-01-01T00:00:00.001Z","dir":"{dir}","raw":{raw}}}"#
            ));
            text.push('\n');
        }
        std::fs::write(&path, text).unwrap();
        let mut tape = Tape::new();
        let spec = crate::tape::IndexSpec::session(1, pointers(ignore));
        crate::tape::index(&path, &spec, |batch| {
            batch.into_iter().for_each(|u| tape.apply(u));
            true
        });
        assert!(tape.complete());
        tape
    }

    /// The keys of a live request, as the tape server's reader makes them.
    fn live(line: &str, ignore: &[&str]) -> (MatchKey, Option<MatchKey>) {
        let norm = reel_mcp::normalize::Normalizer::new().with_ignore(pointers(ignore));
        let s = norm.scan(line).unwrap();
        (s.key, s.alt_key)
    }

    fn find_live(tape: &mut Tape, line: &str, ignore: &[&str], strict: bool) -> Lookup {
        let (key, alt) = live(line, ignore);
        tape.find(key, alt, strict)
    }

    const CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}"#;
    const ANSWER: &str =
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"3"}]}}"#;

    /// Rule `content`, exactly: the recorded request's own bytes find it.
    #[test]
    fn the_recorded_request_itself_matches() {
        let mut t = indexed(&[CALL, ANSWER], &[]);
        assert_eq!(find_live(&mut t, CALL, &[], false), Lookup::Found(0));
        assert_eq!(find_live(&mut t, CALL, &[], true), Lookup::Found(0));
    }

    /// Rule `content`, normalised: another id, member order, spacing and a progress
    /// token do not make another request; another argument value does.
    #[test]
    fn a_request_equal_after_normalisation_matches_and_another_argument_misses() {
        let mut t = indexed(&[CALL, ANSWER], &[]);
        let same = r#"{ "params": {"arguments": {"b": 2, "a": 1}, "name": "add", "_meta": {"progressToken": "tok"}},
            "method": "tools/call", "id": "live-7", "jsonrpc": "2.0" }"#;
        assert_eq!(find_live(&mut t, same, &[], false), Lookup::Found(0));
        let other = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":3}}}"#;
        assert_eq!(find_live(&mut t, other, &[], false), Lookup::None);
        let renamed = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sum","arguments":{"a":1,"b":2}}}"#;
        assert_eq!(find_live(&mut t, renamed, &[], false), Lookup::None);
    }

    /// `--ignore`: a volatile field matches whatever its value, on both sides; without
    /// the pointer the same request is a miss.
    #[test]
    fn an_ignored_field_matches_whatever_its_value() {
        let rec = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"now","arguments":{"at":"2026-01-01T00:00:00Z","tz":"UTC"}}}"#;
        let live_call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"now","arguments":{"at":"2031-05-05T10:00:00Z","tz":"UTC"}}}"#;
        let ignore = ["/params/arguments/at"];
        let mut t = indexed(&[rec, ANSWER], &ignore);
        assert_eq!(
            find_live(&mut t, live_call, &ignore, false),
            Lookup::Found(0)
        );
        let mut t = indexed(&[rec, ANSWER], &[]);
        assert_eq!(find_live(&mut t, live_call, &[], false), Lookup::None);
        // The ignored field only: another `tz` is still another request.
        let other_tz = live_call.replace("UTC", "CET");
        let mut t = indexed(&[rec, ANSWER], &ignore);
        assert_eq!(find_live(&mut t, &other_tz, &ignore, false), Lookup::None);
    }

    /// Rule `repeats` with real keys: identical calls take the recorded answers in
    /// recorded order, whatever their live ids; past the last one, a call (not a list
    /// read) is a miss.
    #[test]
    fn repeated_calls_take_their_recorded_answers_in_order_then_miss() {
        let second = CALL.replace(r#""id":1"#, r#""id":2"#);
        let answer2 = ANSWER.replace(r#""id":1"#, r#""id":2"#);
        let mut t = indexed(&[CALL, ANSWER, &second, &answer2], &[]);
        let live_a = CALL.replace(r#""id":1"#, r#""id":"a""#);
        let live_b = CALL.replace(r#""id":1"#, r#""id":"b""#);
        assert_eq!(find_live(&mut t, &live_a, &[], false), Lookup::Found(0));
        t.consume(0);
        assert_eq!(find_live(&mut t, &live_b, &[], false), Lookup::Found(1));
        t.consume(1);
        assert_eq!(t.unconsumed_with_key(live(CALL, &[]).0), 0);
        assert_eq!(find_live(&mut t, &live_a, &[], false), Lookup::None);
        assert_eq!(t.unused().count(), 0);
    }

    /// A miss: a method the tape never saw, and a request that is neither exact nor
    /// equal after normalisation; the tape's own requests stay unused.
    #[test]
    fn a_request_the_tape_never_saw_is_a_miss_and_leaves_the_tape_unused() {
        let mut t = indexed(&[CALL, ANSWER], &[]);
        let read =
            r#"{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"file:///x"}}"#;
        assert!(!t.has_method("resources/read"));
        assert_eq!(find_live(&mut t, read, &[], false), Lookup::None);
        assert_eq!(find_live(&mut t, read, &[], true), Lookup::None);
        assert_eq!(t.unused().collect::<Vec<_>>(), vec![0]);
        assert_eq!(t.candidates("tools/call"), &[0]);
    }

    /// `--strict` with real keys: a request that is on the tape but not next is a miss,
    /// and does not move the cursor.
    #[test]
    fn strict_refuses_a_recorded_request_out_of_turn() {
        let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
        let listed = r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#;
        let mut t = indexed(&[CALL, ANSWER, list, listed], &[]);
        assert_eq!(find_live(&mut t, list, &[], true), Lookup::None);
        assert_eq!(t.next_in_order(), Some(0));
        assert_eq!(find_live(&mut t, CALL, &[], true), Lookup::Found(0));
        t.consume(0);
        assert_eq!(find_live(&mut t, list, &[], true), Lookup::Found(1));
    }
}
