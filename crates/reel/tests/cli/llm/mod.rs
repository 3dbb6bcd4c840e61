//! `reel llm` as a user runs it: the recording proxy between the official SDKs (and
//! independent mock servers) and a model API, and `reel llm --play` serving what it
//! recorded.
//!
//! - `matrix`: Python and Node SDKs, every API, streamed and plain, text, tool loops and
//!   thinking — direct, through reel and replayed, with the same results and bytes;
//!   llmock and aimock as upstreams;
//! - `conversation`: tool loops — echoed turns, `history_elided` digests recomputed
//!   independently, generations counted, eight loops at once;
//! - `faults`: severed and aborted streams, an unreachable upstream, 429, gzip, in-stream
//!   errors, an https upstream with and without its CA;
//! - `secrets`: keys and organisation headers forwarded, never recorded;
//! - `clients`: the Vercel AI SDK, litellm and a gateway's path, recorded with turns;
//!   an API reel does not read, said so;
//! - `endings`: however a client hangs up and however the last writes are framed, a
//!   whole answer is never called truncated;
//! - `harness_e2e`: Claude Code recorded (install, llm) and replayed offline, whole;
//! - `replay`: misses, repeated requests, pacing, `--play -- CMD`, and `reel llm -- CMD`.

mod clients;
mod conversation;
mod endings;
mod faults;
mod harness_e2e;
mod matrix;
mod mmsp;
mod offline;
mod replay;
pub(crate) mod secrets;
pub(crate) mod support;
