//! A trace queue that is always full loses nothing: the traffic waits instead.
//! (That drops are counted in `reel.gap` events is tested where the writer can be held
//! still: `crates/reel-record/tests/stdio.rs`.)

use crate::support::{Session, run};

#[test]
fn a_queue_of_one_line_slows_the_traffic_and_loses_nothing() {
    let n = 20_000;
    let input: Vec<u8> = (0..n)
        .flat_map(|i| {
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"ping\"}}\n").into_bytes()
        })
        .collect();
    let s = Session::new();
    // `--queue-bytes 1`: every line waits for the one before it to be written.
    let out = run(s.command(&["--queue-bytes", "1"], &["cat"]), input.clone());
    assert_eq!(out.code(), Some(0), "{}", out.stderr_text());
    assert!(out.stdout == input);
    let trace = s.trace();
    for dir in ["in", "out"] {
        let raws = trace.raws(dir);
        assert_eq!(raws.len(), n, "{dir}");
        for (i, raw) in raws.iter().enumerate() {
            assert_eq!(
                *raw,
                format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"ping\"}}")
            );
        }
    }
    assert!(trace.events("reel.gap").is_empty());
}
