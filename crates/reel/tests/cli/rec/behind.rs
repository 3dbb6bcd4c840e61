//! A trace queue that is always full loses nothing: the traffic waits instead.
//! (That drops are counted in `reel.gap` events is tested where the writer can be held
//! still: `crates/reel-record/tests/stdio.rs`.)

use crate::harness::rec_support::{Session, run};

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

/// A server that stops reading its stdin while it writes far more than the trace queue
/// holds, with more client input stuck in front of it: reel must keep relaying the
/// server's output (directly, the two would get along), and record it all.
#[test]
fn a_server_that_stops_reading_while_it_writes_a_lot_does_not_stall() {
    let out_lines = 200_000; // about 20 MB, more than the 8 MiB queue
    let notification = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"a log line from a busy server, padded to about a hundred bytes"}}"#;
    let script = format!(
        "read first; yes '{notification}' | head -n {out_lines}; cat >/dev/null; echo done >&2"
    );
    // Line 1 starts the flood; 4 MB more fill the server's stdin pipe and then some.
    let mut input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"start\"}\n".to_vec();
    let filler = format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/filler\",\"params\":{{\"pad\":\"{}\"}}}}\n",
        "p".repeat(1000)
    );
    for _ in 0..4000 {
        input.extend_from_slice(filler.as_bytes());
    }
    let s = Session::new();
    let out = run(s.command(&[], &["sh", "-c", &script]), input);
    assert_eq!(out.code(), Some(0), "{}", out.stderr_text());
    assert_eq!(out.stdout.len(), out_lines * (notification.len() + 1));
    let trace = s.trace();
    assert_eq!(trace.raws("out").len(), out_lines);
    assert_eq!(trace.raws("in").len(), 4001);
}
