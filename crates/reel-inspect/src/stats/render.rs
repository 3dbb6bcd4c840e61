//! `reel stats` for people: the session, the tools and models tables, errors and
//! warnings, rendered from a [`Stats`] report (whose JSON is `mcp-tape.stats/1`). Cells
//! that quote the trace are made one line before they are measured.

use std::fmt::Write as _;

use super::{ErrorSource, Origin, Stats};
use reel_report::display::{self, Cell, Paint, Table, Tone, one_line};

/// The report as tables, for people.
pub fn text(r: &Stats, paint: Paint<'_>) -> String {
    let mut s = String::new();
    render_session(&mut s, r, paint);
    render_tools(&mut s, r, paint);
    render_models(&mut s, r, paint);
    render_errors(&mut s, r, paint);
    render_warnings(&mut s, r, paint);
    s
}

fn render_session(s: &mut String, r: &Stats, paint: Paint<'_>) {
    let ss = &r.session;
    let label = one_line(ss.label.as_deref().unwrap_or("(no label)"));
    let mut about = vec![ss.kind.clone().unwrap_or_else(|| "no meta line".to_owned())];
    about.extend(ss.producer.clone());
    let _ = writeln!(
        s,
        "{}  ({})",
        paint(Tone::Heading, &label),
        about.join(", ")
    );
    match &r.file {
        super::FileRef::One(f) => {
            let _ = writeln!(s, "  file      {f}");
        }
        super::FileRef::Many(fs) => {
            for (i, f) in fs.iter().enumerate() {
                let _ = writeln!(
                    s,
                    "  {}{f}",
                    if i == 0 { "files     " } else { "          " }
                );
            }
        }
    }
    let _ = writeln!(
        s,
        "  time      {} → {}  ({})",
        ss.started_at.as_deref().unwrap_or("?"),
        ss.ended_at.as_deref().unwrap_or("?"),
        ss.duration_ms
            .map_or_else(|| "duration unknown".to_owned(), display::duration)
    );
    let ended = match (ss.exit_code, &ss.end_reason) {
        (Some(code), Some(reason)) => format!("exit {code}, {reason}"),
        (Some(code), None) => format!("exit {code}"),
        (None, Some(reason)) => reason.clone(),
        (None, None) => "no end line".to_owned(),
    };
    let _ = writeln!(s, "  ended     {ended}");
    let c = &ss.records;
    let skipped = if ss.skipped_lines > 0 {
        paint(Tone::Warn, &format!("{} skipped", ss.skipped_lines))
    } else {
        "0 skipped".to_owned()
    };
    let _ = writeln!(
        s,
        "  records   {} ({} meta, {} message, {} event, {} turn, {} end, {} other), {skipped}",
        c.total, c.meta, c.message, c.event, c.turn, c.end, c.other
    );
}

fn render_tools(s: &mut String, r: &Stats, paint: Paint<'_>) {
    let _ = writeln!(s);
    if r.tools.is_empty() {
        let _ = writeln!(s, "{}  none", paint(Tone::Heading, "tools"));
        return;
    }
    let mut t = Table::new(&[
        ("tools", false),
        ("calls", true),
        ("errors", true),
        ("pending", true),
        ("p50", true),
        ("p95", true),
        ("origin", false),
    ]);
    for tool in &r.tools {
        let origin = match tool.origin {
            Origin::Mcp => "mcp",
            Origin::Turn => "turn",
            Origin::Mixed => "mixed",
        };
        t.row(vec![
            Cell::left(&tool.name),
            Cell::right(tool.calls.to_string()),
            Cell::right(tool.errors.to_string()).paint_if(tool.errors > 0, Tone::Bad),
            Cell::right(tool.pending.to_string()).paint_if(tool.pending > 0, Tone::Warn),
            Cell::right(opt(tool.p50_ms, display::duration)),
            Cell::right(opt(tool.p95_ms, display::duration)),
            Cell::left(origin),
        ]);
    }
    t.write(s, paint);
}

fn render_models(s: &mut String, r: &Stats, paint: Paint<'_>) {
    let _ = writeln!(s);
    let Some(m) = &r.models else {
        let why = if r.warnings.iter().any(|w| w.code == "llm-turns-missing") {
            "no assistant turns: llm exchanges gave none, see the warnings"
        } else {
            "no assistant turns"
        };
        let _ = writeln!(s, "{}  none ({why})", paint(Tone::Heading, "models"));
        return;
    };
    let mut t = Table::new(&[
        ("models", false),
        ("turns", true),
        ("input", true),
        ("output", true),
        ("cache read", true),
        ("cache write", true),
        ("hit rate", true),
        ("thinking", true),
        ("ttft p50", true),
        ("ttft p95", true),
        ("cost", true),
    ]);
    for row in &m.per_model {
        let thinking = match row.thinking_tokens {
            Some(n) if row.thinking_estimated => format!("~{}", tokens(n)),
            other => opt(other, tokens),
        };
        let cost = match (row.priced, row.est_cost_usd) {
            (false, _) => "unpriced".to_owned(),
            (true, c) => opt(c, usd),
        };
        t.row(vec![
            Cell::left(&row.model),
            Cell::right(row.calls.to_string()),
            Cell::right(opt(row.input_tokens, tokens)),
            Cell::right(opt(row.output_tokens, tokens)),
            Cell::right(opt(row.cache_read_tokens, tokens)),
            Cell::right(opt(row.cache_creation_tokens, tokens)),
            Cell::right(opt(row.cache_hit_rate, percent)),
            Cell::right(thinking),
            Cell::right(opt(row.ttft_p50_ms, display::duration)),
            Cell::right(opt(row.ttft_p95_ms, display::duration)),
            Cell::right(cost).paint_if(!row.priced, Tone::Warn),
        ]);
    }
    t.write(s, paint);
    let sum = &m.summary;
    let mut line = format!(
        "  {} assistant turns of {} turns",
        sum.assistant_turns, sum.turns
    );
    if sum.echoed_turns > 0 {
        let _ = write!(line, " ({} echoed, not counted)", sum.echoed_turns);
    }
    if let Some(ms) = sum.total_model_time_ms {
        let _ = write!(line, "; model time {}", display::duration(ms));
    }
    let _ = writeln!(s, "{line}");
    let c = &m.cost;
    let total = match c.total_usd {
        Some(usd_total) if c.partial => format!("at least {}", usd(usd_total)),
        Some(usd_total) => usd(usd_total),
        None => "unknown".to_owned(),
    };
    let mut line = format!(
        "  cost {total} (estimated at list prices as of {})",
        c.as_of.as_deref().unwrap_or("?")
    );
    if !c.unpriced_models.is_empty() {
        let unpriced: Vec<_> = c.unpriced_models.iter().map(|m| one_line(m)).collect();
        let _ = write!(line, "; unpriced: {}", unpriced.join(", "));
    }
    let _ = writeln!(s, "{line}");
}

fn render_errors(s: &mut String, r: &Stats, paint: Paint<'_>) {
    if r.errors.is_empty() {
        return;
    }
    let _ = writeln!(s);
    let title = format!("errors ({})", r.errors.len());
    let mut t = Table::new(&[
        (&title, false),
        ("source", false),
        ("name", false),
        ("message", false),
    ]);
    t.header_tone = Tone::Bad;
    for e in &r.errors {
        let source = match e.source {
            ErrorSource::Tool => "tool",
            ErrorSource::Jsonrpc => "jsonrpc",
            ErrorSource::Llm => "llm",
        };
        t.row(vec![
            Cell::left(e.t.as_deref().unwrap_or("?")),
            Cell::left(source),
            Cell::left(&e.name),
            Cell::left(first_line(&e.message, 120)),
        ]);
    }
    t.write(s, paint);
}

fn render_warnings(s: &mut String, r: &Stats, paint: Paint<'_>) {
    if r.warnings.is_empty() {
        return;
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "{}", paint(Tone::Warn, "warnings"));
    for w in &r.warnings {
        let _ = writeln!(s, "  {}: {}", paint(Tone::Warn, w.code), w.message);
    }
}

fn opt(v: Option<f64>, f: fn(f64) -> String) -> String {
    v.map_or_else(|| "-".to_owned(), f)
}

/// A whole count with thousands separators.
fn tokens(n: f64) -> String {
    if n.fract() != 0.0 || n.abs() >= 1e15 {
        return format!("{n}");
    }
    let digits = (n.abs() as u64).to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if n < 0.0 { format!("-{out}") } else { out }
}

fn percent(rate: f64) -> String {
    format!("{:.1}%", rate * 100.0)
}

fn usd(v: f64) -> String {
    if v.abs() < 1.0 {
        format!("${v:.4}")
    } else {
        format!("${v:.2}")
    }
}

/// The first line of `text`, cut to `max` characters.
fn first_line(text: &str, max: usize) -> String {
    let first = text.lines().next().unwrap_or("");
    let mut out: String = first.chars().take(max).collect();
    if first.chars().count() > max || text.lines().nth(1).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(tokens(206450.0), "206,450");
        assert_eq!(tokens(999.0), "999");
        assert_eq!(tokens(1000.0), "1,000");
        assert_eq!(usd(0.48766), "$0.4877");
        assert_eq!(usd(12.5), "$12.50");
        assert_eq!(percent(0.3), "30.0%");
        assert_eq!(first_line("a\nb", 10), "a…");
    }
}
