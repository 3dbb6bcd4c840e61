//! `reel export FMT TRACE [-o OUT]`: a trace written in another tool's format, for the
//! tools people keep using (`reel_convert`), or as OpenTelemetry spans (`otlp`,
//! in `cmd::otlp`). What the format cannot hold is said on stderr.

use std::path::PathBuf;

use reel_convert::export_trace::{ExportOptions, Written, export_files, export_stream};
use reel_convert::{ExportError, Format};

use crate::cmd::sink::Sink;
use crate::cmd::trace_arg::RunDir;
use crate::exit::{self, coded};
use crate::output::Output;

const AFTER_HELP: &str = "\
Formats, for the tools that read them:
  mcporter   the NDJSON `mcporter replay` serves: put it at
             ~/.mcporter/recordings/<session>.ndjson. Each message line becomes its raw
             JSON-RPC message with mcporter's _meta {dir, server, ts} added; the server is
             the run's label unless --server NAME.
  mcptape    a run directory (trace.jsonl + meta.json) for `mcptape play`; -o names the
             directory [default: .mcptape/runs/<run>].
  mcp-cassette  an mcp-cassette cassette (JSON, format_version 3) `mcp-cassette
             replay` serves (also spelt `cassette`).
  mcp-vcr    an mcp-vcr transcript (YAML) `mcp-vcr replay` serves (also `vcr`).
  mmsp       MMSP tracer files (RFC-0010): <id>.json and <id>.txt in the cache directory
             --cache DIR [default: $MMSP_CACHE_DIR, else cache], the id --id ID [default:
             the run's name]; one conversation per id.
  otlp       OpenTelemetry spans, of one or more traces: sent to a collector with
             --endpoint URL (OTLP/HTTP, protobuf; retried on 429/502/503/504 and
             connection errors), or written as OTLP/JSON (one ExportTraceServiceRequest
             a line, at most 512 spans each) to -o FILE or stdout. A span per recorded
             session (the parent of the rest), per MCP request/response and
             notification (`tools/call add`: mcp.method.name, mcp.session.id,
             mcp.protocol.version, jsonrpc.request.id, gen_ai.tool.name,
             gen_ai.prompt.name, mcp.resource.uri, error.type, rpc.response.status_code)
             and per model call (`chat MODEL`: gen_ai.operation.name,
             gen_ai.provider.name, gen_ai.request.model, gen_ai.response.model,
             gen_ai.usage.input_tokens (cached tokens included, as the conventions
             define it), gen_ai.usage.output_tokens, gen_ai.usage.cache_read.input_tokens,
             gen_ai.usage.cache_creation.input_tokens, gen_ai.response.finish_reasons);
             a request that carried a W3C traceparent in params._meta joins that trace.
             Ids derive from the trace, so exporting it again gives the same spans. No
             arguments, results or message text are put in spans; error messages are.
What a format has no place for (batches, stderr, non-JSON output, HTTP facts, turns in
an MCP format, messages in MMSP) is counted on stderr.

Exit status: 0 written; 64 bad flags, or a trace id MMSP refuses; 66 the trace cannot be
read or holds nothing the format can hold; 69 the collector did not take the spans; 73
the output cannot be written.";

/// The formats `reel export` writes: the recording formats by the names `import --from`
/// takes (one list, in reel-convert), and OpenTelemetry.
fn formats() -> clap::builder::PossibleValuesParser {
    use clap::builder::PossibleValue;
    let written = Format::WRITTEN
        .iter()
        .map(|f| PossibleValue::new(f.name()).aliases(f.aliases().iter().copied()));
    clap::builder::PossibleValuesParser::new(written.chain([PossibleValue::new("otlp")]))
}

/// Arguments of `reel export`.
#[derive(clap::Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// The format to write: mcporter, mcptape, mcp-cassette, mcp-vcr, mmsp or otlp.
    #[arg(value_name = "FORMAT", value_parser = formats())]
    format: String,

    /// The trace (a path or a run name); otlp takes several.
    #[arg(value_name = "TRACE", required = true)]
    traces: Vec<String>,

    /// Write here instead of stdout (an existing file is not overwritten); mcptape: the
    /// run directory to create.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: Option<PathBuf>,

    /// mcporter: the server name the recording is for (mcporter's config name) [default:
    /// the run's label].
    #[arg(long, value_name = "NAME")]
    server: Option<String>,

    /// mmsp: the cache directory [default: $MMSP_CACHE_DIR, else `cache`].
    #[arg(long, value_name = "DIR")]
    cache: Option<PathBuf>,

    /// mmsp: the trace id, a relative path inside the cache directory [default: the
    /// run's name].
    #[arg(long, value_name = "ID")]
    id: Option<String>,

    #[cfg(feature = "http")]
    #[command(flatten)]
    otlp: crate::cmd::otlp::ExportFlags,

    #[command(flatten)]
    runs: RunDir,
}

/// Runs `reel export`.
pub fn run(args: Args, _out: &Output) -> anyhow::Result<u8> {
    if args.format == "otlp" {
        return otlp(&args);
    }
    let [trace] = args.traces.as_slice() else {
        return Err(coded(
            exit::USAGE,
            format!(
                "{} writes one trace at a time (otlp takes several)",
                args.format
            ),
        ));
    };
    let path = args.runs.resolve_readable(trace)?;
    // clap gives the format's own name for an alias.
    let Some(format) = Format::from_name(&args.format) else {
        unreachable!("clap allows only the formats written, not {}", args.format);
    };
    let cache = args
        .cache
        .clone()
        .or_else(|| std::env::var_os("MMSP_CACHE_DIR").map(PathBuf::from));
    let options = ExportOptions {
        format,
        trace: &path,
        run_dir: args.output.as_deref(),
        server: args.server.as_deref(),
        cache: cache.as_deref(),
        id: args.id.as_deref(),
    };
    let done = if format.writes_files() {
        export_files(&options).map_err(refused)?
    } else {
        let mut sink = Sink::open(args.output.as_deref())?;
        let done = export_stream(&options, &mut sink.out).map_err(refused)?;
        sink.commit()?;
        done
    };
    match &done.written {
        Written::Run(dir) => say!("reel: wrote the mcptape run {}", dir.display()),
        Written::Files(files) => {
            for f in files {
                say!("reel: wrote {}", f.display());
            }
        }
        _ => {}
    }
    if !done.left.is_empty() {
        say!("reel: note: {}; left out: {}", done.holds, done.left);
    }
    Ok(exit::OK)
}

/// An export that failed, with its exit status.
fn refused(e: ExportError) -> anyhow::Error {
    let code = match e {
        ExportError::TraceId(_) => exit::USAGE,
        ExportError::Write(_) => exit::CANT_CREATE,
        _ => exit::NO_INPUT,
    };
    coded(code, e.to_string())
}

#[cfg(feature = "http")]
fn otlp(args: &Args) -> anyhow::Result<u8> {
    let traces = args
        .traces
        .iter()
        .map(|t| args.runs.resolve_readable(t))
        .collect::<anyhow::Result<Vec<_>>>()?;
    crate::cmd::otlp::export(&traces, &args.otlp, args.output.as_deref(), Sink::open)
}

#[cfg(not(feature = "http"))]
fn otlp(_: &Args) -> anyhow::Result<u8> {
    Err(coded(
        exit::USAGE,
        "otlp: this reel was built without HTTP (the `http` feature); rebuild it with default features",
    ))
}
