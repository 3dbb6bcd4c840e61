//! The stdio recorder as a library, with a trace sink the test holds still: what
//! happens when the trace cannot keep up. By default the traffic waits and nothing is
//! lost; with `WhenBehind::Drop` lines are dropped and counted in a `reel.gap` event.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::FromRawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use reel_record::{ChildEnd, Notice, Outcome, StdioConfig, StdioRecorder, TraceTarget, WhenBehind};
use reel_redact::redact::Redactor;
use reel_trace::line::parse_line;
use reel_trace::{Line, Timestamp};

/// A trace sink whose writes after the first (the meta line) wait until it is opened.
#[derive(Clone, Default)]
struct Gate {
    inner: Arc<(Mutex<GateState>, Condvar)>,
}

#[derive(Default)]
struct GateState {
    open: bool,
    writes: usize,
    bytes: Vec<u8>,
}

impl Gate {
    fn open(&self) {
        let (m, c) = &*self.inner;
        m.lock().unwrap().open = true;
        c.notify_all();
    }

    fn bytes(&self) -> Vec<u8> {
        self.inner.0.lock().unwrap().bytes.clone()
    }
}

impl Write for Gate {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let (m, c) = &*self.inner;
        let mut st = m.lock().unwrap();
        st.writes += 1;
        while st.writes > 1 && !st.open {
            st = c.wait(st).unwrap();
        }
        st.bytes.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A pipe whose ends the server does not inherit (else `cat` would hold its own
/// input open).
fn pipe() -> (File, File) {
    let mut fds = [0; 2];
    // SAFETY: a valid two-element array for pipe(2) to fill.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    for fd in fds {
        // SAFETY: fcntl on a descriptor we own.
        assert_eq!(
            unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) },
            0
        );
    }
    // SAFETY: both descriptors are fresh and owned by nothing else.
    unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) }
}

fn line(i: usize) -> String {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"ping\"}}\n")
}

/// Runs `cat` through the recorder with a one-byte queue and a gated trace; `talk` gets
/// the client's ends of the pipes and `gate`; returns the outcome and the trace lines.
fn session(
    when_behind: WhenBehind,
    on_notice: impl Fn(&Notice, &Gate) + Send + Sync + 'static,
    talk: impl FnOnce(File, File, &Gate),
) -> (Outcome, Vec<String>) {
    let gate = Gate::default();
    let mut config = StdioConfig::new(vec!["cat".into()]);
    config.queue_bytes = 1;
    config.when_behind = when_behind;
    config.redactor = Redactor::disabled();
    let recorder = StdioRecorder::new(config);
    let trace = TraceTarget::from_writer(gate.clone(), Timestamp::now());
    let (client_in_r, client_in_w) = pipe();
    let (client_out_r, client_out_w) = pipe();
    let client = reel_record::ClientIo {
        input: Box::new(client_in_r),
        output: Box::new(client_out_w),
        errors: Box::new(io::sink()),
    };
    let notice_gate = gate.clone();
    let run = std::thread::spawn(move || {
        recorder
            .run(trace, client, move |n| on_notice(&n, &notice_gate))
            .expect("the session runs")
    });
    talk(client_in_w, client_out_r, &gate);
    gate.open();
    let outcome = run.join().unwrap();
    let text = String::from_utf8(gate.bytes()).unwrap();
    (outcome, text.lines().map(str::to_owned).collect())
}

#[test]
fn a_trace_that_cannot_keep_up_slows_the_traffic_and_loses_nothing() {
    let behind = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&behind);
    let n = 300;
    let (outcome, lines) = session(
        WhenBehind::Wait,
        move |notice, gate| {
            if let Notice::Behind { dropping: false } = notice {
                seen.fetch_add(1, Ordering::SeqCst);
                // Only once the traffic has been held back does the trace move again.
                gate.open();
            }
        },
        |mut to_reel, mut from_reel, _| {
            // Lock-step: each line is sent only once its echo is back, so every read of
            // a pipe carries one line and the one-byte queue must hold traffic back.
            // (Written all at once, the lines could arrive in a single chunk that the
            // queue takes whole, and nothing would ever wait.)
            for i in 0..n {
                let want = line(i);
                to_reel.write_all(want.as_bytes()).unwrap();
                let mut echoed = vec![0; want.len()];
                from_reel.read_exact(&mut echoed).unwrap();
                assert!(echoed == want.as_bytes(), "the client got other bytes");
            }
            drop(to_reel);
            let mut rest = Vec::new();
            from_reel.read_to_end(&mut rest).unwrap();
            assert!(rest.is_empty(), "nothing beyond the echoes");
        },
    );
    assert!(
        matches!(outcome.child, ChildEnd::Exited(0)),
        "{:?}",
        outcome.child
    );
    assert_eq!(behind.load(Ordering::SeqCst), 1, "said once");
    assert_eq!(outcome.dropped, (0, 0));
    assert_eq!(
        (outcome.counts.inbound, outcome.counts.outbound),
        (n as u64, n as u64)
    );
    let messages = lines
        .iter()
        .filter(|l| matches!(parse_line(l.as_bytes()), Ok(Line::Message(_))))
        .count();
    assert_eq!(messages, 2 * n);
    assert!(!lines.iter().any(|l| l.contains("reel.gap")));
}

#[test]
fn with_drop_when_behind_lines_are_dropped_and_counted_in_a_gap() {
    let n = 100;
    let (outcome, lines) = session(
        WhenBehind::Drop,
        |_, _| {},
        |mut to_reel, from_reel, _| {
            // One line at a time, each echoed before the next: by the time the client
            // has read echo k, reel has offered line k (both ways) to the trace, which
            // is stuck on its first line.
            let mut from_reel = io::BufReader::new(from_reel);
            for i in 0..n {
                to_reel.write_all(line(i).as_bytes()).unwrap();
                let mut echo = String::new();
                io::BufRead::read_line(&mut from_reel, &mut echo).unwrap();
                assert_eq!(echo, line(i));
            }
        },
    );
    assert!(
        matches!(outcome.child, ChildEnd::Exited(0)),
        "{:?}",
        outcome.child
    );
    let (dropped_lines, dropped_bytes) = outcome.dropped;
    assert!(dropped_lines > 0);
    let gaps: Vec<(u64, u64)> = lines
        .iter()
        .filter_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
            (v["kind"] == "reel.gap")
                .then(|| (v["lines"].as_u64().unwrap(), v["bytes"].as_u64().unwrap()))
        })
        .collect();
    assert!(!gaps.is_empty(), "no reel.gap event");
    let gap_lines: u64 = gaps.iter().map(|g| g.0).sum();
    let gap_bytes: u64 = gaps.iter().map(|g| g.1).sum();
    assert_eq!((gap_lines, gap_bytes), (dropped_lines, dropped_bytes));
    // Every line is either in the trace or counted as lost.
    let recorded = outcome.counts.inbound + outcome.counts.outbound;
    assert_eq!(recorded + dropped_lines, 2 * n as u64);
}

/// The server writes its last line and exits while the trace is held still for longer
/// than the drain limit: that line is on its way (waiting for the trace), not silence,
/// so it reaches the client whole and the session ends normally, without "stayed open".
#[test]
fn a_last_line_waiting_for_a_slow_trace_is_forwarded_after_the_server_exits() {
    let gate = Gate::default();
    let answer = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
    let mut config = StdioConfig::new(vec![
        "sh".into(),
        "-c".into(),
        format!("printf '%s\\n' '{answer}'").into(),
    ]);
    config.drain_limit = std::time::Duration::from_millis(200);
    config.redactor = Redactor::disabled();
    let recorder = StdioRecorder::new(config);
    let trace = TraceTarget::from_writer(gate.clone(), Timestamp::now());
    let (client_in_r, client_in_w) = pipe();
    let (mut client_out_r, client_out_w) = pipe();
    drop(client_in_w);
    let client = reel_record::ClientIo {
        input: Box::new(client_in_r),
        output: Box::new(client_out_w),
        errors: Box::new(io::sink()),
    };
    let said = Arc::new(Mutex::new(Vec::new()));
    let heard = Arc::clone(&said);
    let run = std::thread::spawn(move || {
        recorder
            .run(trace, client, move |n| {
                heard.lock().unwrap().push(n.to_string())
            })
            .expect("the session runs")
    });
    // Five times the drain limit with the trace held still, then let it go.
    std::thread::sleep(std::time::Duration::from_secs(1));
    gate.open();
    let outcome = run.join().unwrap();
    let mut got = String::new();
    client_out_r.read_to_string(&mut got).unwrap();
    assert_eq!(got, format!("{answer}\n"), "the client got the last line");
    let said = said.lock().unwrap();
    assert!(
        !said.iter().any(|n| n.contains("stayed open")),
        "not taken for silence: {said:?}"
    );
    assert!(matches!(outcome.child, ChildEnd::Exited(0)));
    assert_eq!(outcome.counts.outbound, 1);
}
