//! `reel ls` for people: the runs of a listing as one table, newest first.

use super::Run;
use reel_report::display::{self, Cell, Paint, Table, Tone};

/// The columns, and whether each is right-aligned (numbers).
const HEADERS: [(&str, bool); 12] = [
    ("STARTED (UTC)", false),
    ("LABEL", false),
    ("KIND", false),
    ("DURATION", true),
    ("IN/OUT", true),
    ("TURNS", true),
    ("MODELS", false),
    ("TOKENS", true),
    ("ERRORS", true),
    ("END", false),
    ("SIZE", true),
    ("FILE", false),
];

/// The runs as a table: a header line, then a line each run. Labels are trace content:
/// cells are made one line, and the caller writes through its terminal-safe writer.
pub fn table(runs: &[Run], paint: Paint<'_>) -> String {
    let mut t = Table::new(&HEADERS);
    for run in runs {
        let end_tone = match (run.interrupted, run.exit_code) {
            (true, _) => Some(Tone::Warn),
            (false, Some(0)) => Some(Tone::Good),
            (false, Some(_)) => Some(Tone::Bad),
            (false, None) => None,
        };
        let cells = row(run);
        t.row(
            cells
                .into_iter()
                .zip(HEADERS)
                .enumerate()
                .map(|(i, (text, (_, right)))| {
                    let cell = if right {
                        Cell::right(text)
                    } else {
                        Cell::left(text)
                    };
                    match end_tone {
                        Some(tone) if i == 9 => cell.paint_if(true, tone),
                        _ => cell,
                    }
                })
                .collect(),
        );
    }
    let mut out = String::new();
    t.write(&mut out, paint);
    out
}

/// A run's cells, in [`HEADERS`] order.
fn row(run: &Run) -> [String; 12] {
    let started = match run.started() {
        Some(t) => {
            let iso = t.to_iso();
            // 2026-11-30T08:57:12.345Z → 2026-11-30 08:57:12
            format!("{} {}", &iso.as_str()[..10], &iso.as_str()[11..19])
        }
        None => run.started_at.clone().unwrap_or_else(|| "?".into()),
    };
    let label = run.label.clone().unwrap_or_else(|| "-".into());
    let duration = match run.duration_ms {
        Some(ms) if run.interrupted => format!("≥{}", display::duration(ms)),
        Some(ms) => display::duration(ms),
        None => "?".into(),
    };
    let (io, turns, errors) = match &run.counts {
        Some(c) => (
            format!("{}/{}", c.inbound, c.outbound),
            c.turns.to_string(),
            c.errors.to_string(),
        ),
        None => ("?".into(), "?".into(), "?".into()),
    };
    let models = match run.models.as_slice() {
        [] => "-".to_owned(),
        [one] => one.clone(),
        [first, rest @ ..] => format!("{first} +{}", rest.len()),
    };
    let mut tokens = run.tokens.map_or_else(|| "-".to_owned(), |t| t.to_string());
    if run.turnless > 0 {
        // Never "0 tokens" in silence: these exchanges' tokens are in no count.
        tokens.push_str(&format!(" +{} unread", run.turnless));
    }
    let end = match (&run.exit_code, &run.reason, run.interrupted) {
        (_, _, true) => "interrupted".to_owned(),
        (Some(c), _, _) => format!("exit {c}"),
        (None, Some(r), _) => r.clone(),
        (None, None, false) => "ended".into(),
    };
    let mut file = run
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if run.files.len() > 1 {
        file.push_str(&format!(" (+{} rotated)", run.files.len() - 1));
    }
    [
        started,
        label,
        run.kind.clone(),
        duration,
        io,
        turns,
        models,
        tokens,
        errors,
        end,
        display::size(run.bytes),
        file,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use reel_report::display::plain;

    #[test]
    fn the_table_lines_up_and_escapes_labels() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("2026-01-01T00-00-00-000Z-a.jsonl");
        std::fs::write(
            &path,
            "{\"v\":1,\"type\":\"meta\",\"startedAt\":\"2026-01-01T00:00:00.000Z\",\"label\":\"a\\nb\"}\n{\"type\":\"end\",\"t\":\"2026-01-01T00:00:01.000Z\",\"exitCode\":0,\"durationMs\":1000}\n",
        )
        .unwrap();
        let listing = crate::runs::list_runs(dir.path()).unwrap();
        let text = table(&listing.runs, &plain);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[0].starts_with("STARTED (UTC)"), "{text}");
        assert!(lines[1].contains(r"a\nb"), "{text}");
        assert!(lines[1].contains("exit 0"), "{text}");
        assert_eq!(lines[0].find("LABEL"), lines[1].find(r"a\nb"), "{text}");
        let painted = table(&listing.runs, &|t, s| format!("<{t:?}>{s}"));
        assert!(painted.contains("<Good>exit 0"), "{painted}");
    }
}
