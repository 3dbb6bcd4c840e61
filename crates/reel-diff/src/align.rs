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
use std::sync::Arc;

use reel_mcp::normalize::MatchKey;

use crate::DiffError;
use crate::compare::{self, Findings, Strictness};
use crate::side::{DirKey, Event, ExRec, LooseRec, Payloads, SideTotals, TurnRec};

type Key = (DirKey, MatchKey);

/// Pairs records from the two sides and compares each pair.
pub(crate) struct Aligner {
    pub payloads: [Payloads; 2],
    pub findings: Findings,
    strict: Strictness,
    unmatched: [HashMap<Key, VecDeque<u64>>; 2],
    partner: [HashMap<u64, u64>; 2],
    done: [HashMap<u64, Box<ExRec>>; 2],
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
                    Some(q) => {
                        let front = q.pop_front();
                        if q.is_empty() {
                            self.unmatched[o].remove(&key);
                        }
                        front
                    }
                    None => None,
                };
                match theirs {
                    Some(theirs) => {
                        self.partner[s].insert(seq, theirs);
                        self.partner[o].insert(theirs, seq);
                    }
                    None => self.unmatched[s].entry(key).or_default().push_back(seq),
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
            &self.payloads,
            &mut self.findings,
        );
    }
}
