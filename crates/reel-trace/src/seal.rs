//! Tamper evidence: a hash chain over a trace's lines, kept in a sidecar file beside
//! the trace (`TRACE.seal`), so the trace itself is never touched and every reader
//! (reel's, mcp-replay's, mcp-tape's, `jq`) still reads it as it is.
//!
//! One mechanism, two ways in: [`Sealer`] seals lines one at a time. `reel seal TRACE`
//! feeds it a finished trace ([`seal_trace`]); `reel rec --seal` hands one to the
//! [`TraceWriter`](crate::TraceWriter) as a [`LiveSeal`], so every line the writer
//! writes is sealed as it is written, whichever producer wrote it. [`verify()`] reads a
//! trace against its seal and names the first line that was changed, removed, inserted
//! or reordered.
//!
//! # The sidecar, `reel.seal/1`
//!
//! JSON lines, each ending in LF:
//!
//! ```text
//! {"schema":"reel.seal/1","type":"head","files":["x.jsonl"],"t":"…","producer":{…},"chain":"sha256"}
//! {"n":1,"sha256":"<hex of d1>","chain":"<hex of c1>"}
//! {"n":2,"sha256":"<hex of d2>","chain":"<hex of c2>"}
//! {"type":"close","lines":2,"chain":"<hex of F(c2 ‖ \"close\")>","t":"…"}
//! ```
//!
//! - `d_n` = SHA-256 of line `n` exactly as it is in the file, its line ending (LF or
//!   CRLF) included: `sed -n 5p TRACE | sha256sum` prints `d_5` of an LF trace. A UTF-8
//!   byte-order mark at the start of a file is not covered (every reader drops it).
//! - `c_0` = F(SHA-256 of the head line, LF included); `c_n` = F(`c_(n-1)` ‖ `d_n`);
//!   the close record's chain is F(`c_N` ‖ `"close"`), so a seal cut short cannot
//!   be closed again by copying a line record's chain.
//! - F is SHA-256 (`"chain":"sha256"`), or HMAC-SHA-256 under a key the user keeps
//!   (`"chain":"hmac-sha256"`, and `"key"`: the key's id, [`SealKey::id`]).
//! - `n` counts the lines of the trace as its readers read them: the rotated
//!   companions oldest first (`files` in reading order), then the named file.
//! - No close record: the recording was interrupted (or is still going). Its sealed
//!   lines still verify; lines after them are *unsealed*, not tampered. Only a seal made
//!   while recording (`rec --seal`) can be open: a seal of a finished trace (`reel seal`)
//!   commits to its line count in the head (`"lines":N`, covered by the chain), so one
//!   cut at the tail together with its close record is an edited seal, not an open one.
//!
//! # What a seal proves
//!
//! Each line record carries the line's own digest, so a verifier tells which kind of
//! change a line underwent; the chain binds the records in order, so an edit of the
//! sidecar shows as a broken chain. Without a key, anyone who rewrites the trace can
//! also write a fresh seal for it (or recompute the chain): an unkeyed seal catches
//! accidents, careless edits and tools that rewrite traces, not a forger who knows the
//! format. With a key, a forger needs the key; the line digests stay plain SHA-256, so a
//! verifier without the key still checks every line, just not who wrote the seal.
//!
//! The parts: this file holds the format (digests, the chain, [`Sealer`] and
//! [`LiveSeal`]); `key` the key of a keyed seal ([`SealKey`]); `finished` the sealing
//! of a finished trace ([`seal_trace`]); `sidecar` the reading of a seal, record by
//! record; [`verify`](mod@verify) the comparison of a trace with its seal.
//!
//! Invariants:
//! - A record is written to the sidecar only after the line it seals was handed to the
//!   trace's sink and flushed ([`LiveSeal`]): a recorder killed at any moment leaves a
//!   seal whose records all describe lines that are in the trace.
//! - A seal that cannot be written never stops the trace: the trace goes on unsealed
//!   and the failure is reported once ([`LiveSeal::on_failure`]).

mod chain;
mod findings;
mod finished;
mod key;
mod sidecar;
pub mod verify;

pub use chain::{
    CHAIN_HMAC, CHAIN_SHA256, Digest, FailureHook, LiveSeal, SCHEMA, SUFFIX, Sealer,
    create_sidecar, line_digest, raw_line_digest, sidecar_path,
};
pub(crate) use chain::{Chain, ChainFn, file_name, private_options};
pub use finished::{SealError, Sealed, seal_trace};
pub use key::{KeyError, SealKey};
pub use verify::{Finding, FindingKind, SealStatus, Verification, VerifyError, verify};
