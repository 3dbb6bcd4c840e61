//! The SSE parser (`reel_net::sse::Parser`) on a response body from a server, split
//! into chunks anywhere.
//!
//! Asserts: the events do not depend on how the body was split; the parser's count is
//! the number of events handed out; and every event, encoded with its own line ending
//! and parsed again, is the same event (what the tape server writes, verify reads back).

use reel_net::sse::{Event, Parser};

use crate::input::{choice, chunks};

fn parse(pieces: &[&[u8]]) -> Vec<Event> {
    let mut parser = Parser::new();
    let mut events = Vec::new();
    for p in pieces {
        parser.feed(p, |e| events.push(e));
    }
    parser.finish(|e| events.push(e));
    assert_eq!(parser.events(), events.len() as u64);
    assert!(parser.is_idle(), "idle after finish");
    events
}

/// The target.
pub fn run(data: &[u8]) {
    let (seed, data) = choice(data);
    let whole = parse(&[data]);
    if seed != 0 {
        assert_eq!(
            parse(&chunks(data, seed)),
            whole,
            "the split changed the events"
        );
    }
    for e in &whole {
        let wire = e.to_bytes(e.eol);
        let again = parse(&[&wire]);
        assert_eq!(
            again.as_slice(),
            std::slice::from_ref(e),
            "an event does not survive its encoding {:?}",
            String::from_utf8_lossy(&wire)
        );
    }
}
