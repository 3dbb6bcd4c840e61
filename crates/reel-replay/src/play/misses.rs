//! Misses and client drift: what the tape cannot answer (with the nearest recorded
//! candidates and a JSON-pointer diff) and where the client answered differently.

use std::io::Write;

use reel_mcp::normalize::{Difference, diff};

use super::input::Incoming;
use super::options::CANDIDATES_SCANNED;
use super::out::{ClientOut, Dest};
use super::report::{self, Candidate, Miss};
use super::server::Server;

impl<C: ClientOut, D: Write> Server<C, D> {
    // ---- misses and drift --------------------------------------------------------

    pub(super) fn miss_reason(&mut self, inc: &Incoming) -> String {
        if self.opts.strict {
            return match self.src.tape.next_in_order() {
                Some(i) => {
                    let e = self.src.tape.exchange(i);
                    format!(
                        "--strict expects the next recorded request, {} at {}",
                        self.src.tape.method_name(e.method),
                        self.src.files.location(e.request.at)
                    )
                }
                None => "--strict: every recorded request was already answered".into(),
            };
        }
        if let Some(why) = self.handshake_miss(inc) {
            return why;
        }
        let candidates = self.src.tape.candidates(&inc.method);
        if candidates.is_empty() {
            return "the tape holds no request with this method".into();
        }
        let same = candidates
            .iter()
            .any(|&i| self.src.tape.exchange(i).key == Some(inc.key));
        if same {
            "every recorded request equal to it was already answered (repeated calls consume recorded answers in order)".into()
        } else {
            "no recorded request is equal to it after normalisation".into()
        }
    }

    pub(super) fn miss(&mut self, inc: Incoming, reason: String) {
        self.summary.missed += 1;
        let nearest = self.nearest(&inc);
        let m = Miss {
            method: inc.method.clone(),
            id: inc.id_raw.clone(),
            request: inc.params_text(&self.norm),
            reason,
            nearest,
        };
        self.say(&m.to_text());
        let code = if self.src.tape.has_method(&inc.method) || self.opts.strict {
            report::MISS_CODE
        } else {
            reel_mcp::drift::METHOD_NOT_FOUND
        };
        self.send_error(Dest::answer(inc.route), &inc.id_raw, &m.error_object(code));
    }

    /// The recorded requests of the same method closest to a missed one (with
    /// `--strict`, the expected one first).
    pub(super) fn nearest(&mut self, inc: &Incoming) -> Vec<Candidate> {
        let Some(live) = inc.normalized(&self.norm) else {
            return Vec::new();
        };
        let mut pool: Vec<u32> = Vec::new();
        if self.opts.strict {
            pool.extend(self.src.tape.next_in_order());
        }
        let cands = self.src.tape.candidates(&inc.method);
        let unused = cands
            .iter()
            .copied()
            .filter(|&i| !self.src.tape.exchange(i).consumed);
        let used = cands
            .iter()
            .copied()
            .filter(|&i| self.src.tape.exchange(i).consumed);
        pool.extend(unused.chain(used).take(CANDIDATES_SCANNED));
        pool.dedup();
        let mut out: Vec<Candidate> = Vec::new();
        for i in pool {
            let e = self.src.tape.exchange(i);
            let (at, consumed) = (e.request.at, e.consumed);
            let norm = self.norm.clone();
            let Some(Ok(rec)) = self.with_raw(at, |raw| norm.normalize_recorded(raw)) else {
                continue;
            };
            out.push(Candidate {
                location: self.src.files.location(at),
                line: at.line,
                consumed,
                differences: diff(&rec, &live),
            });
        }
        if !self.opts.strict {
            out.sort_by_key(|c| (c.differences.len(), c.consumed, c.line));
        }
        out.truncate(report::NEAREST_SHOWN);
        out
    }

    pub(super) fn retry_drift(&mut self, inc: &Incoming, ex: u32) {
        let at = self.src.tape.exchange(ex).request.at;
        let norm = self.norm.clone();
        let Some(Ok(rec)) = self.with_raw(at, |raw| norm.normalize_recorded(raw)) else {
            return;
        };
        let Some(live) = inc.normalized(&self.norm) else {
            return;
        };
        let d = diff(&rec, &live);
        let place = self.src.files.location(at);
        self.drift(
            &format!("the client's inputResponses in its {} retry", inc.method),
            &place,
            &d,
        );
    }

    pub(super) fn drift(&mut self, what: &str, place: &str, d: &[Difference]) {
        self.summary.client_drift += 1;
        self.say(&report::drift_text(what, place, d));
    }
}
