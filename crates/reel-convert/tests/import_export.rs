//! `reel import` and `reel export` as library calls: the decisions the commands make
//! ([`import_all`], [`export_files`], [`export_stream`]), without the terminal.

use std::path::{Path, PathBuf};

use reel_convert::export_trace::{
    ExportOptions, Written, export_files, export_stream, trace_label,
};
use reel_convert::import::{
    ImportError, ImportEvent, ImportOptions, ImportOutcome, ImportStop, Output, SourceError,
    import_all,
};
use reel_convert::{ExportError, Format};
use reel_redact::redact::Redactor;
use reel_trace::Timestamp;
use reel_trace::line::{Dir, Line, Meta, parse_line_str};
use reel_trace::writer::{Ending, MessageLine, TraceWriter};

const START: Timestamp = Timestamp(1_796_020_626_000);

/// A trace labelled `label` (none: no label) of one `tools/list` exchange.
fn write_trace(path: &Path, label: Option<&str>) {
    let f = std::fs::File::create(path).unwrap();
    let mut w = TraceWriter::new(std::io::BufWriter::new(f), START);
    let meta = Meta {
        v: Some(1.into()),
        ty: "meta".into(),
        label: label.map(str::to_owned),
        started_at: Some(START.to_iso().as_str().to_owned()),
        transport: Some("stdio".into()),
        ..Meta::default()
    };
    w.write_meta(&meta).unwrap();
    let request = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let answer = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#;
    let later = Timestamp(START.0 + 5);
    w.write_message(&MessageLine::new(START, Dir::In, request))
        .unwrap();
    w.write_message(&MessageLine::new(later, Dir::Out, answer))
        .unwrap();
    w.finish(Ending::Reason("closed".into()), later).unwrap();
}

fn options<'a>(trace: &'a Path, format: Format) -> ExportOptions<'a> {
    ExportOptions {
        format,
        trace,
        run_dir: None,
        server: None,
        cache: None,
        id: None,
    }
}

/// An mcporter recording of the trace, at `path`.
fn write_mcporter(dir: &Path, path: &Path) {
    let trace = dir.join(format!(
        "{}.trace.jsonl",
        path.file_name().unwrap().to_string_lossy()
    ));
    write_trace(&trace, Some("demo"));
    let mut out = std::fs::File::create(path).unwrap();
    export_stream(&options(&trace, Format::Mcporter), &mut out).unwrap();
}

/// What `import_all` told, in order, as short words.
fn import(options: &ImportOptions<'_>) -> (Vec<String>, Result<ImportOutcome, ImportStop>) {
    let mut told = Vec::new();
    let result = import_all(options, &Redactor::builtin(), &mut |event| {
        told.push(match event {
            ImportEvent::SourceFailed(e) => format!("source failed: {e}"),
            ImportEvent::Unreadable { path, .. } => format!("unreadable: {}", path.display()),
            ImportEvent::RecordingFailed(e) => format!("recording failed: {e}"),
            ImportEvent::Imported {
                found,
                first_of_format,
                ..
            } => format!("imported {} first={first_of_format}", found.label),
            other => format!("{other:?}"),
        });
    });
    (told, result)
}

fn import_options<'a>(sources: &'a [PathBuf], output: Output<'a>) -> ImportOptions<'a> {
    ImportOptions {
        sources,
        from: None,
        output,
        name: None,
    }
}

/// The messages of `trace`: direction and JSON-RPC text.
fn messages(trace: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(trace).unwrap();
    text.lines()
        .filter_map(|l| match parse_line_str(l).unwrap() {
            Line::Message(m) => Some((m.dir?.into_owned(), m.raw?.get().to_owned())),
            _ => None,
        })
        .collect()
}

#[test]
fn an_existing_output_file_is_refused_and_left_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("demo.ndjson");
    write_mcporter(tmp.path(), &src);
    let out = tmp.path().join("out.jsonl");
    std::fs::write(&out, "keep me").unwrap();
    let sources = [src];
    let (told, result) = import(&import_options(&sources, Output::File(&out)));
    assert!(told.is_empty(), "{told:?}");
    assert!(
        matches!(result, Err(ImportStop::Create(ImportError::Target(_)))),
        "{result:?}"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep me");
}

#[test]
fn an_exported_trace_imports_back_to_the_same_messages() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("t.jsonl");
    write_trace(&trace, Some("demo"));
    let exported = tmp.path().join("demo.ndjson");
    let mut f = std::fs::File::create(&exported).unwrap();
    let done = export_stream(&options(&trace, Format::Mcporter), &mut f).unwrap();
    drop(f);
    assert_eq!(done.written, Written::Stream);
    assert!(done.left.is_empty(), "{}", done.left);
    let back = tmp.path().join("back.jsonl");
    let sources = [exported];
    let (told, result) = import(&import_options(&sources, Output::File(&back)));
    assert_eq!(told, ["imported demo first=true"]);
    assert_eq!(
        result.unwrap(),
        ImportOutcome {
            imported: 1,
            failed: 0,
            lossy: 0
        }
    );
    assert_eq!(messages(&back), messages(&trace));
}

#[test]
fn with_several_sources_one_that_cannot_be_read_is_told_and_the_rest_imported() {
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("good.ndjson");
    write_mcporter(tmp.path(), &good);
    let missing = tmp.path().join("missing.ndjson");
    let traces = tmp.path().join("traces");
    let sources = [missing, good];
    let (told, result) = import(&import_options(&sources, Output::Dir(&traces)));
    assert_eq!(told.len(), 2, "{told:?}");
    assert!(told[0].starts_with("source failed: "), "{told:?}");
    assert_eq!(told[1], "imported good first=true");
    assert_eq!(
        result.unwrap(),
        ImportOutcome {
            imported: 1,
            failed: 1,
            lossy: 0
        }
    );
}

#[test]
fn the_only_source_that_cannot_be_read_stops_the_import() {
    let tmp = tempfile::tempdir().unwrap();
    let traces = tmp.path().join("traces");
    let sources = [tmp.path().join("missing.ndjson")];
    let (told, result) = import(&import_options(&sources, Output::Dir(&traces)));
    assert!(told.is_empty(), "{told:?}");
    assert!(
        matches!(
            result,
            Err(ImportStop::Source(SourceError::Unreadable { .. }))
        ),
        "{result:?}"
    );
}

#[test]
fn a_source_of_no_known_format_is_named_for_what_it_is() {
    let tmp = tempfile::tempdir().unwrap();
    let traces = tmp.path().join("traces");
    let empty_dir = tmp.path().join("empty");
    std::fs::create_dir(&empty_dir).unwrap();
    let text = tmp.path().join("notes.txt");
    std::fs::write(&text, "just some notes\n").unwrap();
    let stop = |src: &PathBuf, from: Option<Format>| {
        let sources = [src.clone()];
        let options = ImportOptions {
            from,
            ..import_options(&sources, Output::Dir(&traces))
        };
        import(&options).1.unwrap_err()
    };
    assert!(matches!(
        stop(&empty_dir, None),
        ImportStop::Source(SourceError::NoRecording { .. })
    ));
    assert!(matches!(
        stop(&text, None),
        ImportStop::Source(SourceError::Unknown(ImportError::Unknown { .. }))
    ));
    // Neither a file nor a directory.
    #[cfg(unix)]
    assert!(matches!(
        stop(&PathBuf::from("/dev/null"), Some(Format::Mcporter)),
        ImportStop::Source(SourceError::NotAFile { .. })
    ));
}

#[test]
fn one_trace_cannot_be_named_for_a_directory_of_several_recordings() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("recordings");
    std::fs::create_dir(&dir).unwrap();
    write_mcporter(tmp.path(), &dir.join("a.ndjson"));
    write_mcporter(tmp.path(), &dir.join("b.ndjson"));
    let out = tmp.path().join("out.jsonl");
    let sources = [dir.clone()];
    let (_, result) = import(&import_options(&sources, Output::File(&out)));
    assert!(
        matches!(result, Err(ImportStop::OneTrace { recordings: 2, .. })),
        "{result:?}"
    );
    assert!(!out.exists());
    // --name names one trace just as -o does.
    let traces = tmp.path().join("traces");
    let options = ImportOptions {
        name: Some("one"),
        ..import_options(&sources, Output::Dir(&traces))
    };
    assert!(matches!(
        import(&options).1,
        Err(ImportStop::OneTrace { recordings: 2, .. })
    ));
}

#[test]
fn a_format_s_limits_are_new_only_for_its_first_recording() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("recordings");
    std::fs::create_dir(&dir).unwrap();
    write_mcporter(tmp.path(), &dir.join("a.ndjson"));
    write_mcporter(tmp.path(), &dir.join("b.ndjson"));
    let traces = tmp.path().join("traces");
    let sources = [dir];
    let (told, result) = import(&import_options(&sources, Output::Dir(&traces)));
    assert_eq!(told, ["imported a first=true", "imported b first=false"]);
    assert_eq!(result.unwrap().imported, 2);
}

#[test]
fn the_trace_label_names_the_export_unless_told_otherwise() {
    let tmp = tempfile::tempdir().unwrap();
    let labelled = tmp.path().join("labelled.jsonl");
    write_trace(&labelled, Some("demo"));
    let unlabelled = tmp.path().join("unlabelled.jsonl");
    write_trace(&unlabelled, None);
    assert_eq!(trace_label(&labelled), "demo");
    assert_eq!(trace_label(&unlabelled), "run");

    let cache = tmp.path().join("cache");
    let done = export_files(&ExportOptions {
        cache: Some(&cache),
        ..options(&labelled, Format::Mmsp)
    });
    // A trace of MCP traffic holds no conversation MMSP can hold: refused, nothing written.
    assert!(matches!(done, Err(ExportError::Unfit(_))), "{done:?}");

    let run = tmp.path().join("run");
    let done = export_files(&ExportOptions {
        run_dir: Some(&run),
        ..options(&labelled, Format::Mcptape)
    })
    .unwrap();
    assert_eq!(done.written, Written::Run(run.clone()));
    assert_eq!(done.holds, "mcptape runs hold MCP messages");
    // An existing run directory is not written over.
    let again = export_files(&ExportOptions {
        run_dir: Some(&run),
        ..options(&labelled, Format::Mcptape)
    });
    assert!(matches!(again, Err(ExportError::Write(_))), "{again:?}");
}

#[test]
fn an_mmsp_trace_id_that_leaves_the_cache_is_refused_as_a_trace_id() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("t.jsonl");
    write_trace(&trace, Some("demo"));
    let cache = tmp.path().join("cache");
    for id in ["", "../escape"] {
        let done = export_files(&ExportOptions {
            cache: Some(&cache),
            id: Some(id),
            ..options(&trace, Format::Mmsp)
        });
        assert!(
            matches!(done, Err(ExportError::TraceId(_))),
            "{id}: {done:?}"
        );
    }
    assert!(!cache.exists());
}

#[test]
fn a_format_is_written_only_the_way_it_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("t.jsonl");
    write_trace(&trace, Some("demo"));
    assert!(Format::Mcptape.writes_files() && Format::Mmsp.writes_files());
    assert!(!Format::Mcporter.writes_files());
    let mut out = Vec::new();
    assert!(export_stream(&options(&trace, Format::Mcptape), &mut out).is_err());
    assert!(out.is_empty());
    assert!(export_files(&options(&trace, Format::Cassette)).is_err());
}
