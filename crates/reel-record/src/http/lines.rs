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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use reel_redact::redact::Redactor;
    use reel_trace::{Ending, Timestamp, TraceWriter};
    use serde_json::json;

    use super::*;
    use crate::http::note::{RequestFacts, ResponseFacts, SseFacts};
    use crate::queue::Stream;

    /// The trace lines `notes` become (the `end` line left out), each a line of bytes
    /// with its note.
    fn written(notes: Vec<(&[u8], HttpNote)>) -> Vec<Value> {
        let mut lines = LineRecorder::new(
            TraceWriter::new(Vec::new(), Timestamp(0)),
            Redactor::builtin(),
        );
        for (bytes, note) in notes {
            let line = LineRecord {
                stream: Stream::ServerToClient,
                t: Timestamp(0),
                bytes: bytes.to_vec(),
                eol: reel_trace::Eol::Lf,
                http: None,
            };
            write(&mut lines, &line, note).unwrap();
        }
        let out = lines.finish(Ending::ExitCode(0), Timestamp(0)).unwrap();
        let mut all: Vec<Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        all.pop();
        all
    }

    fn note(session: &str, note: Note) -> HttpNote {
        HttpNote {
            session: session.into(),
            note,
        }
    }

    fn request() -> Arc<RequestFacts> {
        Arc::new(RequestFacts::new(
            3,
            "POST",
            "/mcp?api_key=s3cr3t".into(),
            vec![
                ("authorization", "Bearer abc.def".into()),
                ("mcp-session-id", "s1".into()),
            ],
        ))
    }

    fn response(status: u16) -> Arc<ResponseFacts> {
        Arc::new(ResponseFacts::new(
            3,
            status,
            vec![("content-type", "text/event-stream".into())],
        ))
    }

    #[test]
    fn a_request_body_is_a_message_in_with_its_session_and_redacted_http_facts() {
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        let lines = written(vec![(body, note("s1", Note::Request(request())))]);
        let l = &lines[0];
        assert_eq!(l["dir"], "in");
        assert_eq!(l["session"], "s1");
        assert_eq!(l["raw"]["method"], "tools/list");
        assert_eq!(l["http"]["req"], 3);
        assert_eq!(l["http"]["method"], "POST");
        assert_eq!(l["http"]["path"], "/mcp?api_key=[REDACTED]");
        assert_eq!(l["http"]["headers"]["authorization"], "[REDACTED]");
        assert_eq!(l["http"]["headers"]["mcp-session-id"], "s1");
    }

    #[test]
    fn an_sse_event_with_empty_data_keeps_its_text_and_its_framing() {
        let sse = SseFacts {
            id: Some("7".into()),
            event: Some("ping".into()),
            has_data: true,
            ..SseFacts::default()
        };
        let lines = written(vec![(
            b"",
            note(
                "s1",
                Note::Sse {
                    facts: response(200),
                    sse,
                },
            ),
        )]);
        let l = &lines[0];
        assert_eq!(l["kind"], kinds::SSE);
        assert_eq!(l["text"], "");
        assert_eq!(l["http"]["status"], 200);
        assert_eq!(l["http"]["sse"], json!({"id": "7", "event": "ping"}));
    }

    #[test]
    fn an_exchange_keeps_a_json_body_as_json_and_a_cut_one_as_text_with_its_size() {
        let exchange = || ExchangeNote {
            request: request(),
            response: None,
            error: None,
            refused: None,
            end: None,
            body_total: None,
            form: None,
        };
        let failed = ExchangeNote {
            response: Some(response(502)),
            error: Some("upstream broke off".into()),
            ..exchange()
        };
        let cut = ExchangeNote {
            end: Some("client"),
            body_total: Some(1 << 20),
            ..exchange()
        };
        let json_body = br#"{"error":"bad","password":"hunter2"}"#;
        let lines = written(vec![
            (json_body, note("s1", Note::Exchange(Box::new(failed)))),
            (
                b"<html>partial",
                note("reel:conn-1", Note::Exchange(Box::new(cut))),
            ),
        ]);
        let (whole, partial) = (&lines[0], &lines[1]);
        assert_eq!(whole["kind"], kinds::HTTP);
        assert_eq!(whole["raw"]["error"], "bad");
        assert_eq!(whole["raw"]["password"], "[REDACTED]");
        assert_eq!(whole["http"]["status"], 502);
        assert_eq!(whole["http"]["error"], "upstream broke off");
        assert_eq!(whole["http"]["path"], "/mcp?api_key=[REDACTED]");
        assert_eq!(whole.get("truncated"), None);
        assert_eq!(partial["session"], "reel:conn-1");
        assert_eq!(partial["text"], "<html>partial");
        assert_eq!(partial["truncated"], 1 << 20);
        assert_eq!(partial["http"]["end"], "client");
        assert_eq!(partial["http"].get("status"), None);
    }
}
