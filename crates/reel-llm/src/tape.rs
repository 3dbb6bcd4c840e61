//! The trace of an LLM session, as `reel llm` writes it and `reel llm --play` reads it.
//!
//! Per exchange (numbered `n` from 1, in `http.req` on each of its lines; its turns also
//! carry `conversation`, the number of the conversation they belong to, see
//! [`crate::history`]), in the order observed:
//! 1. the turns of the request's new messages (a `history_elided` block first when a
//!    prefix was elided; resent assistant turns `echoed: true`);
//! 2. `llm.request` (generation endpoints), or `llm.exchange` (others), once the
//!    response head arrived, with the addendum's members in `raw` and reel's own in
//!    `request` (below);
//! 3. one `reel.llm.body` event per piece of the response body as it arrived — an SSE
//!    event or an NDJSON line with its line ending, or a whole body — with `us`, the
//!    microseconds since the response head, and `decoded` when the body came
//!    compressed (the piece is the decoded text);
//! 4. the assistant turn (generation endpoints), `llm.error` (status ≥ 400, an
//!    unreachable upstream) and `llm.truncated` (a severed stream).
//!
//! What replay needs beyond the addendum, and is kept in reel's extension vocabulary:
//! `request` on `llm.request`/`llm.exchange` — `{"body": …, "elided": {count, sha256}}`,
//! the request body after redaction with the elided messages removed, tool definitions
//! replaced by `{name, sha256}` and the top-level system prompt removed (it is in
//! `raw.system`); the response bodies in `reel.llm.body`; the response status and
//! allowlisted headers in `raw`. `request_sha256` (of the unredacted bytes) lets replay
//! find the exact request without keeping it.
//!
//! Every line is written whole and flushed before the next. The lines of a request
//! and its response head are written before the response goes on to the client. The
//! body pieces of a response are held ([`HeldBody`]) and written together at the
//! first *line seam* (every stream of deltas so far ends a line: a piece whose delta
//! ends in a line break, no PEM block open), when the response ends — completed, cut
//! by the upstream, timed out, or abandoned by the client — or when they exceed
//! [`HOLD_MAX`] (4 MiB): a secret streamed a few characters per event can only be
//! redacted once its pieces are seen together (see [`crate::seams`]), and the rules
//! that read a label and its value (`password: …`, `Authorization: …`) read one line.
//! So the client gets a piece before the trace holds it, and a recorder killed with
//! `kill -9` mid-response loses the pieces of the responses in flight since their last
//! line seam (at most [`HOLD_MAX`] each; their turns were never written); every
//! completed response, every line of an answer before the one being streamed, and
//! every trace line before, is in the trace. Redaction
//! (`reel_redact::redact`, the rules of `reel rec`) applies to turns, `system`,
//! `request.body`, error bodies and body pieces.

use std::io;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use reel_inspect::runs::LlmSummary;
use reel_redact::redact::Redactor;
use reel_trace::line::Turn;
use reel_trace::target::TargetWriter;
use reel_trace::{Ending, EventLine, Timestamp};

/// `kind` of a response body piece.
pub const BODY: &str = reel_trace::line::kinds::LLM_BODY;
/// The addendum's kinds.
pub mod kinds {
    pub use reel_trace::line::kinds::{
        LLM_ERROR as ERROR, LLM_EXCHANGE as EXCHANGE, LLM_REQUEST as REQUEST,
        LLM_TRUNCATED as TRUNCATED,
    };
}

/// The trace being written: one writer shared by every exchange, each line written and
/// flushed whole under its lock.
pub struct Tape {
    writer: Mutex<Option<TargetWriter>>,
    /// The generations so far, for the `end` line's `llm` summary (`reel ls`).
    summary: Mutex<LlmSummary>,
    /// Which exchanges gave turns (the end line counts those that did not).
    coverage: Mutex<reel_trace::llm::TurnCoverage>,
    redactor: Redactor,
    next: AtomicU64,
    /// Told once each: the first write error, and the first write slower than
    /// [`BEHIND_AFTER`].
    on_trouble: Box<dyn Fn(Trouble<'_>) + Send + Sync>,
    told_behind: std::sync::atomic::AtomicBool,
}

/// A write slower than this says the trace disk is behind (the traffic waits for it).
pub const BEHIND_AFTER: std::time::Duration = std::time::Duration::from_millis(250);

/// Trouble with the trace, for the user to hear about.
#[derive(Debug)]
pub enum Trouble<'a> {
    /// A write failed: the rest of the session goes unrecorded.
    Failed(&'a io::Error),
    /// A write took longer than [`BEHIND_AFTER`]: the traffic is slowed down to the
    /// disk's pace (nothing is dropped).
    Behind,
}

impl Tape {
    /// A tape over `writer` (its meta line written).
    pub fn new(
        writer: TargetWriter,
        redactor: Redactor,
        on_trouble: Box<dyn Fn(Trouble<'_>) + Send + Sync>,
    ) -> Tape {
        Tape {
            writer: Mutex::new(Some(writer)),
            summary: Mutex::new(LlmSummary::default()),
            coverage: Mutex::default(),
            redactor,
            next: AtomicU64::new(1),
            on_trouble,
            told_behind: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The redaction rules.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// Numbers the next exchange.
    pub fn next_exchange(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    fn write(&self, f: impl FnOnce(&mut TargetWriter) -> io::Result<()>) {
        let mut guard = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let Some(w) = guard.as_mut() else { return };
        let started = std::time::Instant::now();
        if let Err(e) = f(w).and_then(|()| w.flush()) {
            (self.on_trouble)(Trouble::Failed(&e));
            *guard = None;
        } else if started.elapsed() > BEHIND_AFTER
            && !self.told_behind.swap(true, Ordering::Relaxed)
        {
            (self.on_trouble)(Trouble::Behind);
        }
    }

    /// A turn of exchange `n` in `conversation` (0: none), redacted; returns the turn
    /// as written.
    pub fn turn(&self, n: u64, conversation: u64, turn: &mut Turn) -> Turn {
        turn.extra.insert("http".into(), json!({ "req": n }));
        if conversation > 0 {
            turn.extra
                .insert("conversation".into(), conversation.into());
        }
        let turn = self.redactor.redact_turn(turn);
        self.coverage().turn(n);
        self.summary
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .add(&turn);
        self.write(|w| w.write_turn(&turn));
        turn
    }

    /// An `llm.*` event of exchange `n` with payload `raw` and reel's other members.
    pub fn event(&self, n: u64, t: Timestamp, kind: &str, raw: &Value, fields: Map<String, Value>) {
        if kind == kinds::REQUEST || kind == kinds::EXCHANGE {
            self.coverage().exchange(n, 0, raw);
        }
        let Ok(raw_text) = serde_json::to_string(raw) else {
            return;
        };
        let Ok(raw) = RawValue::from_string(raw_text) else {
            return;
        };
        let mut e = EventLine::new(t, kind);
        e.raw = Some(&raw);
        e.fields = fields;
        e.fields.insert("source".into(), "llm".into());
        e.fields.insert("http".into(), json!({ "req": n }));
        self.write(|w| w.write_event(&e));
    }

    /// The pieces of exchange `n`'s response body held so far, redacted together (see
    /// [`crate::seams`]) and written in order, each with its own time.
    pub fn bodies(&self, n: u64, held: &mut HeldBody, decoded: Option<&str>) {
        if held.pieces.is_empty() {
            return;
        }
        self.coverage().body(n);
        let pieces = held.take();
        let refs: Vec<&[u8]> = pieces.iter().map(|p| p.bytes.as_slice()).collect();
        let redacted = crate::seams::redact_pieces(&self.redactor, &refs);
        for (p, bytes) in pieces.iter().zip(&redacted) {
            if bytes.is_empty() {
                continue; // all it held went into a marker an earlier piece carries
            }
            let mut e = EventLine::new(p.t, BODY);
            match std::str::from_utf8(bytes) {
                Ok(text) => e.text = Some(text),
                Err(_) => e = e.with_payload(bytes),
            }
            e.fields.insert("source".into(), "llm".into());
            e.fields.insert("http".into(), json!({ "req": n }));
            e.fields.insert("us".into(), p.us.into());
            if let Some(d) = decoded {
                e.fields.insert("decoded".into(), d.into());
            }
            self.write(|w| w.write_event(&e));
        }
    }

    /// A `reel.gap` of exchange `n`: `bytes` of its body as received are not in the
    /// trace, and why.
    pub fn gap(&self, n: u64, bytes: u64, why: &str) {
        let mut e = EventLine::new(Timestamp::now(), reel_trace::line::kinds::GAP);
        e.fields.insert("source".into(), "llm".into());
        e.fields.insert("http".into(), json!({ "req": n }));
        e.fields.insert("lines".into(), 0.into());
        e.fields.insert("bytes".into(), bytes.into());
        e.fields.insert("why".into(), why.into());
        self.write(|w| w.write_event(&e));
    }

    /// Writes the end line, with the `llm` summary (the models that generated and
    /// their tokens, so `reel ls` reads them from the last line); the trace is complete.
    /// An error says the trace is incomplete (a write failed now or earlier).
    pub fn finish(&self, ending: Ending) -> io::Result<()> {
        let mut guard = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let summary = {
            let mut summary = self.summary.lock().unwrap_or_else(|e| e.into_inner());
            summary.turnless = self.coverage().turnless().len() as u64;
            summary.to_value()
        };
        match guard.take() {
            Some(w) => {
                let mut extra = Map::new();
                extra.insert("llm".into(), summary);
                w.finish_with(ending, Timestamp::now(), extra).map(drop)
            }
            None => Err(io::Error::other("an earlier write to the trace failed")),
        }
    }
}

impl Tape {
    fn coverage(&self) -> std::sync::MutexGuard<'_, reel_trace::llm::TurnCoverage> {
        self.coverage.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The most bytes of one response's body pieces held for redaction: past it, what is
/// held is written and the next piece starts afresh (a secret straddling that point is
/// redacted as two halves, as every piece was before pieces were held).
pub const HOLD_MAX: usize = 4 << 20;

/// One piece of a response body, as it arrived.
pub struct BodyPiece {
    /// When it arrived.
    pub t: Timestamp,
    /// Microseconds after the response head.
    pub us: u64,
    /// Its bytes (decoded when the body came compressed).
    pub bytes: Vec<u8>,
}

/// The pieces of one response held until they can be redacted together: written by
/// [`Tape::bodies`] at the end of the response (however it ended) or once they exceed
/// [`HOLD_MAX`].
#[derive(Default)]
pub struct HeldBody {
    pieces: Vec<BodyPiece>,
    bytes: usize,
}

impl HeldBody {
    /// What is held, in order; nothing is held after.
    pub(crate) fn take(&mut self) -> Vec<BodyPiece> {
        self.bytes = 0;
        std::mem::take(&mut self.pieces)
    }

    /// Holds `piece`; true when what is held should be written: it exceeds
    /// [`HOLD_MAX`], or `piece` ends a line of every stream of deltas held
    /// (`seams::at_line_seam`, asked only of a whole event holding a `\n`
    /// escape, so a long line is not read again with each piece).
    pub fn hold(&mut self, piece: BodyPiece) -> bool {
        self.bytes += piece.bytes.len();
        let candidate = piece.bytes.ends_with(b"\n") && piece.bytes.windows(2).any(|w| w == b"\\n");
        self.pieces.push(piece);
        if self.bytes > HOLD_MAX {
            return true;
        }
        candidate && {
            let joined: Vec<u8> = self
                .pieces
                .iter()
                .flat_map(|p| p.bytes.iter().copied())
                .collect();
            std::str::from_utf8(&joined).is_ok_and(crate::seams::at_line_seam)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_piece_keeps_its_framing_when_redacted() {
        let r = Redactor::builtin();
        let piece = "event: x\r\ndata: {\"k\":\"sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCD\"}\r\n\r\n";
        let out = crate::seams::redact_lines(&r, piece);
        assert!(out.starts_with("event: x\r\ndata: {\"k\":\""), "{out}");
        assert!(out.ends_with("\"}\r\n\r\n"), "{out}");
        assert!(!out.contains("abcdefghijklmnop"), "{out}");
        assert_eq!(
            crate::seams::redact_lines(&r, "data: [DONE]\n\n"),
            "data: [DONE]\n\n"
        );
    }
}
