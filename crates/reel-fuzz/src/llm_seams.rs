//! The pieces of a response body redacted together (`reel_llm::seams`): a model's
//! stream, cut wherever the network cut it, must come out as the same redacted text
//! however it was cut.
//!
//! The first byte picks how the rest is cut into pieces (every 1 to 16 bytes, in a
//! pattern the byte seeds). Asserts: as many pieces come back as went in; joined, they
//! are what the body redacted as one piece gives (a secret across a cut is redacted as
//! if there were none); and redacting that again changes nothing.

use std::sync::LazyLock;

use reel_llm::seams::redact_pieces;
use reel_redact::redact::Redactor;

use crate::input::choice;

static REDACTOR: LazyLock<Redactor> = LazyLock::new(Redactor::builtin);

/// The target.
pub fn run(data: &[u8]) {
    let (c, body) = choice(data);
    let mut pieces: Vec<&[u8]> = Vec::new();
    let mut at = 0;
    let mut step = u32::from(c);
    while at < body.len() {
        step = step.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let n = 1 + (step >> 16) as usize % 16;
        let end = (at + n).min(body.len());
        pieces.push(&body[at..end]);
        at = end;
    }
    let r = &*REDACTOR;
    let cut = redact_pieces(r, &pieces);
    assert_eq!(cut.len(), pieces.len(), "pieces added or lost");
    let whole = redact_pieces(r, &[body]);
    let joined: Vec<u8> = cut.concat();
    if std::str::from_utf8(body).is_ok() {
        assert_eq!(
            String::from_utf8_lossy(&joined),
            String::from_utf8_lossy(&whole.concat()),
            "the cut changed the redaction"
        );
        let again = redact_pieces(r, &[&joined]);
        assert_eq!(again.concat(), joined, "redacting twice");
    }
}
