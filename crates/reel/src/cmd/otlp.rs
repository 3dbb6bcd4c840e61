//! OpenTelemetry: `reel export otlp TRACE…` (to a collector, a file, or stdout) and
//! `--otlp URL` of the recording commands (spans sent while the run is recorded).
//!
//! Wiring only: the spans, their encoding and the sending are `reel_otlp`'s.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use reel_otlp::export::FileError;
use reel_otlp::{
    Client, Collector, ExportTally, LiveExport, request, spans_of_file, to_json, to_protobuf,
};

use crate::exit::{self, coded};

/// How long the end of a recording waits for the last spans to be taken.
const GRACE: Duration = Duration::from_secs(5);

/// How long `reel export otlp` retries one batch.
const EXPORT_DEADLINE: Duration = Duration::from_secs(60);

/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else `OTEL_EXPORTER_OTLP_ENDPOINT` with
/// `/v1/traces` appended: the collector the OpenTelemetry SDKs would use.
pub fn endpoint_from_env() -> Option<String> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").or_else(|| {
        var("OTEL_EXPORTER_OTLP_ENDPOINT")
            .map(|base| format!("{}/v1/traces", base.trim_end_matches('/')))
    })
}

/// `--header` values, then those of `OTEL_EXPORTER_OTLP_HEADERS` and
/// `OTEL_EXPORTER_OTLP_TRACES_HEADERS` (`k=v,k2=v2`, values percent-decoded as the
/// OpenTelemetry specification says; the traces one's come last, so they win).
fn headers(given: &[String]) -> Vec<String> {
    let mut all = given.to_vec();
    for var in [
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    ] {
        let env = std::env::var(var).unwrap_or_default();
        all.extend(
            env.split(',')
                .map(str::trim)
                .filter(|h| !h.is_empty())
                .map(|h| match h.split_once('=') {
                    Some((k, v)) => format!("{}={}", k.trim(), percent_decoded(v.trim())),
                    None => h.to_owned(),
                }),
        );
    }
    all
}

/// A header variable's value, percent-decoded (as written when it does not decode).
fn percent_decoded(v: &str) -> String {
    reel_net::http::percent_decode(v)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .unwrap_or_else(|| v.to_owned())
}

fn collector(url: &str, given_headers: &[String]) -> anyhow::Result<Collector> {
    Collector::new(url, &headers(given_headers)).map_err(|e| coded(exit::USAGE, e.to_string()))
}

/// The flags of `reel export` that only `otlp` reads.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct ExportFlags {
    /// otlp: send to this collector's OTLP/HTTP traces URL (protobuf), e.g.
    /// http://127.0.0.1:4318/v1/traces [default without -o: $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
    /// else $OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces, else OTLP/JSON on stdout].
    #[arg(long, value_name = "URL", conflicts_with = "output")]
    pub endpoint: Option<String>,

    /// otlp: a header for the collector, NAME=VALUE (repeatable; also read from
    /// $OTEL_EXPORTER_OTLP_HEADERS), e.g. an API key.
    #[arg(long = "header", value_name = "NAME=VALUE")]
    pub headers: Vec<String>,
}

/// `reel export otlp TRACE…`: every trace's spans to the collector (`--endpoint`), or as
/// OTLP/JSON lines to `output` (stdout without it).
pub fn export(
    traces: &[PathBuf],
    flags: &ExportFlags,
    output: Option<&std::path::Path>,
    sink: impl FnOnce(Option<&std::path::Path>) -> anyhow::Result<super::sink::Sink>,
) -> anyhow::Result<u8> {
    let endpoint = flags.endpoint.clone().or_else(|| {
        if output.is_none() {
            endpoint_from_env()
        } else {
            None
        }
    });
    let Some(url) = endpoint else {
        let mut sink = sink(output)?;
        let mut spans = 0;
        for trace in traces {
            spans += spans_of_file(trace, |batch| {
                writeln!(sink.out, "{}", to_json(&request(batch)))
            })
            .map_err(|e| match e {
                FileError::Read(e) => coded(exit::NO_INPUT, e.to_string()),
                FileError::Sink(e) if e.kind() == std::io::ErrorKind::BrokenPipe => e.into(),
                FileError::Sink(e) => {
                    coded(exit::CANT_CREATE, format!("cannot write the export: {e}"))
                }
            })?;
        }
        sink.commit()?;
        if let Some(p) = output {
            say!("reel: wrote {spans} spans as OTLP/JSON to {}", p.display());
        }
        return Ok(exit::OK);
    };
    let collector = collector(&url, &flags.headers)?;
    let mut client = Client::new(collector)
        .map_err(|e| coded(exit::INTERNAL, format!("cannot start the OTLP client: {e}")))?;
    let (mut sent, mut rejected) = (0u64, 0u64);
    for trace in traces {
        let result = spans_of_file(trace, |batch| {
            let n = batch.len() as u64;
            let body = to_protobuf(&request(batch));
            let until = Instant::now() + EXPORT_DEADLINE;
            let accepted = client.send(&body, &|| until)?;
            sent += n - accepted.rejected.min(n);
            rejected += accepted.rejected;
            Ok::<(), reel_otlp::send::SendError>(())
        });
        match result {
            Ok(_) => {}
            Err(FileError::Read(e)) => {
                return Err(coded(exit::NO_INPUT, e.to_string()));
            }
            Err(FileError::Sink(e)) => {
                return Err(coded(
                    exit::UNAVAILABLE,
                    format!(
                        "the collector at {} did not take the spans of {}: {} ({sent} spans sent before)",
                        reel_otlp::send::shown(&url),
                        trace.display(),
                        e.message
                    ),
                ));
            }
        }
    }
    let rejected = if rejected > 0 {
        format!(" ({rejected} rejected by the collector)")
    } else {
        String::new()
    };
    say!(
        "reel: sent {sent} spans of {} trace{} to {}{rejected}",
        traces.len(),
        if traces.len() == 1 { "" } else { "s" },
        reel_otlp::send::shown(&url)
    );
    Ok(exit::OK)
}

/// `--otlp URL` of the recording commands (`rec`, `llm`).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct OtlpFlag {
    /// Send the run's spans to this OpenTelemetry collector (its OTLP/HTTP traces URL,
    /// e.g. http://127.0.0.1:4318/v1/traces) while recording. Recording never waits on
    /// it: a queue of 4096 spans, retries with backoff, and spans dropped (counted, and
    /// said at the end) while the collector is down.
    #[arg(long, value_name = "URL")]
    pub otlp: Option<String>,

    /// With --otlp: a header for the collector, NAME=VALUE (repeatable; also read from
    /// $OTEL_EXPORTER_OTLP_HEADERS).
    #[arg(long = "otlp-header", value_name = "NAME=VALUE", requires = "otlp")]
    pub otlp_headers: Vec<String>,
}

/// A live export running beside a recording.
pub struct Live {
    export: LiveExport,
    url: String,
}

impl OtlpFlag {
    /// Checks the flag before anything starts (a bad URL is a usage error).
    pub fn check(&self) -> anyhow::Result<Option<Collector>> {
        self.otlp
            .as_deref()
            .map(|url| collector(url, &self.otlp_headers))
            .transpose()
    }

    /// Starts sending the spans of `trace` (being written) when the flag was given.
    pub fn start_beside(
        collector: Option<Collector>,
        trace: &std::path::Path,
    ) -> anyhow::Result<Option<Live>> {
        let Some(collector) = collector else {
            return Ok(None);
        };
        let url = collector.url();
        let export = LiveExport::start(trace.to_owned(), collector)
            .map_err(|e| coded(exit::INTERNAL, format!("cannot start the OTLP export: {e}")))?;
        Ok(Some(Live { export, url }))
    }
}

impl Live {
    /// The recording has ended: sends the rest and says what became of the spans.
    pub fn finish(self) -> ExportTally {
        let report = self.export.finish(GRACE);
        let mut line = format!("reel: otlp: {} spans sent to {}", report.sent, self.url);
        if report.rejected > 0 {
            line.push_str(&format!(", {} rejected by the collector", report.rejected));
        }
        if report.retries > 0 {
            line.push_str(&format!(" ({} retries)", report.retries));
        }
        if report.dropped > 0 {
            line.push_str(&format!(
                ", {} dropped (the collector was slow or down{})",
                report.dropped,
                report
                    .last_error
                    .as_deref()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default()
            ));
        }
        if let Some(e) = &report.read_error {
            line.push_str(&format!("; the trace could not be read to its end: {e}"));
        }
        say!("{line}");
        report
    }
}

#[cfg(test)]
mod tests {
    use super::percent_decoded;

    #[test]
    fn header_values_are_percent_decoded_and_kept_when_they_do_not_decode() {
        assert_eq!(percent_decoded("Basic%20abc%3D"), "Basic abc=");
        assert_eq!(percent_decoded("a%zzb"), "a%zzb");
        assert_eq!(percent_decoded("%ff"), "%ff", "not UTF-8 once decoded");
    }
}
