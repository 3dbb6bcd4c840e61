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
}

impl Aligner {
    pub(crate) fn new(payloads: [Payloads; 2], strict: Strictness) -> Aligner {
        Aligner {
            payloads,
            findings: Findings::default(),
            strict,
            unmatched: Default::default(),
            partner: Default::default(),
            done: Default::default(),
            turns: Default::default(),
            loose: Default::default(),
        }
    }

    /// Applies one event of side `s` (0 = A, 1 = B).
    pub(crate) fn event(&mut self, s: usize, ev: Event) -> Result<(), DiffError> {
        let o = 1 - s;
        match ev {
            Event::Open { seq, dir, key } => {
                let key = (DirKey::of(dir), key);
                let theirs = match self.unmatched[o].get_mut(&key) {
                    Some(Waiting::Many(q)) if q.len() > 1 => q.pop_front(),
                    Some(Waiting::Many(q)) => {
                        let front = q.pop_front();
                        self.unmatched[o].remove(&key);
                        front
                    }
                    Some(Waiting::One(_)) => match self.unmatched[o].remove(&key) {
                        Some(Waiting::One(seq)) => Some(seq),
                        _ => None,
                    },
                    None => None,
                };
                match theirs {
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
            Event::Done(rec) => {
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
                compare::exchanges(a, b, &mut self.payloads, &mut self.findings)?;
            }
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
