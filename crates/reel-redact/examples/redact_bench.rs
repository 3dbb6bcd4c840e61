//! Times redaction on the inputs that matter: the recorder's common case (a ~1 KB
//! tools/call message, with and without something to redact) and big strings (10 MB of
//! base64 in a message, 10 MB of text every value rule must scan).
//!
//! `cargo run --release -p reel-redact --example redact_bench [-- --small]`
//!
//! Prints the median of several runs; figures, not assertions (tests never time).

use std::hint::black_box;
use std::time::{Duration, Instant};

use reel_redact::redact::Redactor;

fn main() {
    let started = Instant::now();
    let r = Redactor::builtin();
    println!(
        "Redactor::builtin() compile: {:.2} ms",
        ms(started.elapsed())
    );

    let plain = tools_call(false);
    let secret = tools_call(true);
    for (name, msg) in [
        ("1 KB tools/call, nothing to redact", &plain),
        ("1 KB tools/call, walks and redacts", &secret),
    ] {
        let n = 200_000;
        let per = median(7, || {
            let t = Instant::now();
            for _ in 0..n {
                black_box(r.redact_json(black_box(msg)));
            }
            t.elapsed() / n
        });
        println!(
            "{name} ({} bytes): {} ns/message, {:.0} MB/s",
            msg.len(),
            per.as_nanos(),
            msg.len() as f64 / per.as_secs_f64() / 1e6
        );
    }

    if std::env::args().any(|a| a == "--small") {
        return;
    }
    let data = base64_noise(10 * 1024 * 1024);
    let msg = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[{{"type":"image","data":"{data}","mimeType":"image/png"}}]}}}}"#
    );
    let with_secret = msg.replacen(r#""mimeType""#, r#""api_key":"k","mimeType""#, 1);
    let url = format!("data:image/png;base64,{data}");
    let text = "The quick brown fox reads /etc/hosts and https://example.com/x?y=1 daily. "
        .repeat(10 * 1024 * 1024 / 74);
    let big: [(&str, &dyn Fn()); 4] = [
        (
            "10 MB base64 in a message (JSON walk, base64 skip)",
            &|| {
                black_box(r.redact_json(&msg));
            },
        ),
        ("10 MB base64 beside a secret key (walk + copy)", &|| {
            black_box(r.redact_json(&with_secret));
        }),
        ("10 MB data: URL text (every value rule scans it)", &|| {
            black_box(r.redact_text(&url));
        }),
        (
            "10 MB prose with URLs and paths (every value rule)",
            &|| {
                black_box(r.redact_text(&text));
            },
        ),
    ];
    for (name, run) in big {
        let per = median(5, || {
            let t = Instant::now();
            run();
            t.elapsed()
        });
        println!("{name}: {:.1} ms", ms(per));
    }
}

/// A ~1 KB tools/call as clients send it (`_meta.progressToken` included).
fn tools_call(with_secret: bool) -> String {
    let key = if with_secret { "api_key" } else { "region" };
    let body = "Summarise the quarterly report for the northern region, list the three largest \
                changes against last year, and flag any line item above the threshold. "
        .repeat(4);
    format!(
        r#"{{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{{"name":"analyze_report","arguments":{{"query":"{body}","{key}":"eu-north-1","limit":25,"include":["revenue","costs","margin"],"options":{{"format":"markdown","verbose":false,"threshold":0.15}}}},"_meta":{{"progressToken":"b3f1c0de-7a2e-4c1b-9f4e-2d6a8c0e1f23"}}}}}}"#
    )
}

fn base64_noise(len: usize) -> String {
    use base64::Engine;
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let bytes: Vec<u8> = (0..len * 3 / 4 + 3)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect();
    let mut s = base64::engine::general_purpose::STANDARD.encode(bytes);
    s.truncate(len);
    s
}

fn median(runs: usize, mut f: impl FnMut() -> Duration) -> Duration {
    let mut times: Vec<Duration> = (0..runs).map(|_| f()).collect();
    times.sort();
    times[runs / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
