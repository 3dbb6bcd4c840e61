//! A trace file as OTLP export requests: its spans in batches, each batch one
//! `ExportTraceServiceRequest` under reel's resource and scope, encoded as protobuf
//! (OTLP/HTTP's binary encoding, what a collector is sent) or as OTLP/JSON (one request
//! a line: the OpenTelemetry file exporter's format).

use std::path::Path;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::InstrumentationScope;
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};
use prost::Message;
use reel_trace::reader::{OpenError, TraceReader};

use crate::attrs::Attrs;
use crate::spans::SpanBuilder;

/// Spans in one request: OTLP collectors take far more, but a smaller request is
/// retried cheaply and keeps a live export's memory flat.
pub const BATCH: usize = 512;

/// The request carrying `spans`: resource `service.name` = `reel` (and its version),
/// scope `reel`.
pub fn request(spans: Vec<Span>) -> ExportTraceServiceRequest {
    let mut resource = Attrs::default();
    resource
        .str("service.name", "reel")
        .str("service.version", env!("CARGO_PKG_VERSION"));
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(Resource {
                attributes: resource.0,
                ..Resource::default()
            }),
            scope_spans: vec![ScopeSpans {
                scope: Some(InstrumentationScope {
                    name: "reel".into(),
                    version: env!("CARGO_PKG_VERSION").into(),
                    ..InstrumentationScope::default()
                }),
                spans,
                ..ScopeSpans::default()
            }],
            ..ResourceSpans::default()
        }],
    }
}

/// The protobuf encoding (`application/x-protobuf`).
pub fn to_protobuf(request: &ExportTraceServiceRequest) -> Vec<u8> {
    request.encode_to_vec()
}

/// The OTLP/JSON encoding, on one line.
pub fn to_json(request: &ExportTraceServiceRequest) -> String {
    serde_json::to_string(request).unwrap_or_default()
}

/// Reads the trace at `path` (with its rotated companions) and hands its spans to
/// `sink` in batches of at most [`BATCH`], in the order they completed; returns the
/// number of spans. `sink`'s error stops the reading.
pub fn spans_of_file<E>(
    path: &Path,
    mut sink: impl FnMut(Vec<Span>) -> Result<(), E>,
) -> Result<u64, FileError<E>> {
    let mut reader = TraceReader::open(path).map_err(FileError::Read)?;
    let mut builder = SpanBuilder::new(Some(path.display().to_string()));
    let mut pending: Vec<Span> = Vec::new();
    let mut total = 0u64;
    let mut flush = |batch: Vec<Span>, total: &mut u64| -> Result<(), FileError<E>> {
        *total += batch.len() as u64;
        sink(batch).map_err(FileError::Sink)
    };
    let mut file = 0;
    while let Some(line) = reader.next_line() {
        let line = line.map_err(FileError::Read)?;
        while file < line.file {
            builder.next_file();
            file += 1;
        }
        builder.push(line.raw.number, line.raw.bytes);
        pending.extend(builder.take());
        while pending.len() >= BATCH {
            let rest = pending.split_off(BATCH);
            flush(std::mem::replace(&mut pending, rest), &mut total)?;
        }
    }
    pending.extend(builder.finish());
    for batch in pending.chunks(BATCH) {
        flush(batch.to_vec(), &mut total)?;
    }
    Ok(total)
}

/// Why a file could not be exported.
#[derive(Debug, thiserror::Error)]
pub enum FileError<E> {
    /// The trace cannot be read.
    #[error(transparent)]
    Read(OpenError),
    /// The sink refused a batch.
    #[error("{0}")]
    Sink(E),
}
