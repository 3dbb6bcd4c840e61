//! How the trace writer turns a line that carries an HTTP note into trace lines: a
//! message with reel's `session` and `http` members, a `reel.sse` event, or a
//! `reel.http` event for an exchange with no JSON-RPC message.

use std::io::{self, Write};

use reel_redact::record::{LineRecorder, Tags, classify};
use reel_trace::line::kinds;
use reel_trace::{Dir, EventLine};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::note::{ExchangeNote, HttpNote, Note, headers_value, redact_form, redact_path, to_raw};
use crate::queue::LineRecord;

/// Writes one HTTP record (called by the recorder for lines that carry a note).
pub(crate) fn write<W: Write>(
    lines: &mut LineRecorder<W>,
    line: &LineRecord,
    note: HttpNote,
) -> io::Result<()> {
    let session = Some(&*note.session);
    match note.note {
        Note::Request(facts) => {
            let http = facts.http(lines.redactor()).to_owned();
            let tags = Tags {
                session,
                http: Some(&http),
                ..Tags::default()
            };
            lines.message(line.t, Dir::In, &line.bytes, line.eol, tags)
        }
        Note::Response { facts, sse } => {
            let http = facts.http(lines.redactor(), sse.as_ref());
            let tags = Tags {
                session,
                http: Some(&http),
                ..Tags::default()
            };
            lines.message(line.t, Dir::Out, &line.bytes, line.eol, tags)
        }
        Note::Sse { facts, sse } => {
            let http = facts.http(lines.redactor(), Some(&sse));
            let tags = Tags {
                session,
                http: Some(&http),
                ..Tags::default()
            };
            if line.bytes.is_empty() && sse.has_data {
                let mut e = EventLine::new(line.t, kinds::SSE);
                tags.add_to(&mut e);
                e.text = Some("");
                return lines.write_event(&e);
            }
            lines.event(kinds::SSE, None, line.t, &line.bytes, line.eol, tags)
        }
        Note::Exchange(x) => exchange(lines, line, session, &x),
    }
}

fn exchange<W: Write>(
    lines: &mut LineRecorder<W>,
    line: &LineRecord,
    session: Option<&str>,
    x: &ExchangeNote,
) -> io::Result<()> {
    let redactor = lines.redactor().clone();
    let mut http = Map::new();
    http.insert("req".into(), x.request.req.into());
    http.insert("method".into(), x.request.method.clone().into());
    http.insert(
        "path".into(),
        redact_path(&redactor, &x.request.path).into(),
    );
    if let Some(r) = &x.response {
        http.insert("status".into(), r.status.into());
        http.insert("headers".into(), headers_value(&redactor, &r.headers));
    }
    http.insert(
        "reqHeaders".into(),
        headers_value(&redactor, &x.request.headers),
    );
    if let Some(e) = &x.error {
        http.insert("error".into(), redactor.redact_text(e).into_owned().into());
    }
    if let Some(r) = x.refused {
        http.insert("refused".into(), r.into());
    }
    if let Some(end) = x.end {
        http.insert("end".into(), end.into());
    }
    if let Some(form) = &x.form {
        let text = String::from_utf8_lossy(form);
        http.insert("reqForm".into(), redact_form(&redactor, &text).into());
    }
    let http = to_raw(&Value::Object(http));
    let tags = Tags {
        session,
        http: Some(&http),
        ..Tags::default()
    };
    // A JSON body (an OAuth metadata document, a JSON error) is kept as JSON.
    if let Some(json) = classify(&line.bytes) {
        let flat = json.value.replace(['\n', '\r'], "");
        let redacted = redactor.redact_json(&flat);
        if let Ok(raw) = serde_json::from_str::<&RawValue>(&redacted) {
            let mut e = EventLine::new(line.t, kinds::HTTP);
            e.raw = Some(raw);
            if let Some(s) = session {
                e.fields.insert("session".into(), s.into());
            }
            if let Ok(v) = serde_json::from_str(http.get()) {
                e.fields.insert("http".into(), v);
            }
            if let Some(total) = x.body_total {
                e.fields.insert("truncated".into(), total.into());
            }
            return lines.write_event(&e);
        }
    }
    if let Some(total) = x.body_total {
        // The excerpt is cut (maybe inside a character): its text, and the full size in
        // `truncated`, as for a JSON excerpt.
        let lossy = String::from_utf8_lossy(&line.bytes);
        let text = redactor.redact_text(&lossy);
        let mut e = EventLine::new(line.t, kinds::HTTP);
        e.text = Some(&text);
        if let Some(s) = session {
            e.fields.insert("session".into(), s.into());
        }
        if let Ok(v) = serde_json::from_str(http.get()) {
            e.fields.insert("http".into(), v);
        }
        e.fields.insert("truncated".into(), total.into());
        return lines.write_event(&e);
    }
    lines.event(kinds::HTTP, None, line.t, &line.bytes, line.eol, tags)
}
