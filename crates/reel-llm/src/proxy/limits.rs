//! The limits the recording proxy keeps: what a request body may be and how many
//! bytes all of them may take at once, what of a body the trace keeps whole, how long
//! an upstream may be silent, and the grace open exchanges get when it stops.

use std::time::Duration;

/// The largest request body forwarded (images and long contexts fit; a runaway does
/// not fill memory).
pub const REQUEST_MAX: usize = 256 << 20;
/// The request bytes read and recorded at once, all requests together: each costs
/// a few times its size while it is parsed and redacted for the record, so this bounds
/// the recorder's memory whatever the clients send at once.
pub const REQUEST_BUDGET: usize = 256 << 20;
/// How long an upstream may stay silent mid-response (`--idle-timeout`).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(600);
/// Time given to open exchanges when the proxy stops.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);
/// The largest non-streamed response body recorded as one piece (and read for its
/// turn); a larger one is recorded in pieces (16 MiB, then 1 MiB each, cut after white
/// space where there is some so no key is split), redacted together as text,
/// and gives no assistant turn.
pub const WHOLE_KEPT_MAX: usize = 16 << 20;
/// The largest request body of an API reel does not read that the trace keeps (as
/// `request.body`); a larger one is matched on replay by its SHA-256 only.
pub const KEPT_BODY_MAX: usize = 1 << 20;
