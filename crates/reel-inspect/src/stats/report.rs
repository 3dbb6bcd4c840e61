//! The `mcp-tape.stats/1` document, field by field (research/mcp-tape.md §1.11), and
//! how the session facts of several traces merge into one.
//!
//! Unknown values are `None` (JSON `null`), never 0, NaN or infinity. Whole numbers are
//! written as JSON integers (`1000`, not `1000.0`), as JavaScript would write them.

use serde::{Serialize, Serializer};

use super::errors::ErrorRow;
use super::tools::Origin;

/// The schema name written in every document.
pub const SCHEMA: &str = "mcp-tape.stats/1";

/// A whole `reel stats` report.
#[derive(Debug, Clone, Serialize)]
pub struct Stats {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// The trace given; several traces are listed in the order given.
    pub file: FileRef,
    /// Facts about the recording.
    pub session: Session,
    /// Per-model aggregates; `None` when there is no non-echoed assistant turn.
    pub models: Option<Models>,
    /// Per-tool aggregates, most calls first, then by name.
    pub tools: Vec<ToolRow>,
    /// Errors, by `t`.
    pub errors: Vec<ErrorRow>,
    /// Things a reader of the numbers should know (`[]` means the checks ran).
    pub warnings: Vec<Warning>,
}

/// `file`: one path (the schema's string), or several when traces were merged.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum FileRef {
    /// One trace.
    One(String),
    /// Several traces merged into one document.
    Many(Vec<String>),
}

/// Session facts.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    /// `meta.label`.
    pub label: Option<String>,
    /// `meta.kind`, `"mcp"` when a meta line lacks it; merged traces of different kinds
    /// join them with `+` (`"mcp+llm"`).
    pub kind: Option<String>,
    /// `meta.startedAt`.
    pub started_at: Option<String>,
    /// `end.t`, else the greatest `t` seen.
    pub ended_at: Option<String>,
    /// `end.durationMs`, else `endedAt − startedAt`.
    #[serde(serialize_with = "num_opt")]
    pub duration_ms: Option<f64>,
    /// `meta.command` (its strings).
    pub command: Option<Vec<String>>,
    /// `meta.source`, else `producer` (`name@version`), else `mcp-tape@<mcpTapVersion>`.
    pub producer: Option<String>,
    /// Lines by class.
    pub records: LineCounts,
    /// Lines that are not JSON objects (torn, invalid UTF-8, not JSON, arrays, scalars).
    pub skipped_lines: u64,
    /// `end.reason`.
    pub end_reason: Option<String>,
    /// `end.exitCode`.
    #[serde(serialize_with = "num_opt")]
    pub exit_code: Option<f64>,
}

/// Lines by class (the reference consumer's classification).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LineCounts {
    /// Every JSON-object line.
    pub total: u64,
    /// `type: "meta"`.
    pub meta: u64,
    /// `dir: "in" | "out"`.
    pub message: u64,
    /// `dir: "event" | "command" | "telemetry"`.
    pub event: u64,
    /// `type: "turn"`.
    pub turn: u64,
    /// `type: "end"`.
    pub end: u64,
    /// Anything else.
    pub other: u64,
}

impl LineCounts {
    fn add(&mut self, o: &LineCounts) {
        self.total += o.total;
        self.meta += o.meta;
        self.message += o.message;
        self.event += o.event;
        self.turn += o.turn;
        self.end += o.end;
        self.other += o.other;
    }
}

/// Model aggregates.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Models {
    /// One row per model, most calls first, then by name.
    pub per_model: Vec<ModelRow>,
    /// Totals.
    pub summary: ModelSummary,
    /// Estimated cost.
    pub cost: Cost,
}

/// One model.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelRow {
    /// `turn.model`, or `(no model)`.
    pub model: String,
    /// Non-echoed assistant turns.
    pub calls: u64,
    /// Σ `usage.input_tokens` (`null` when no turn had usage).
    #[serde(serialize_with = "num_opt")]
    pub input_tokens: Option<f64>,
    /// Σ `usage.output_tokens`.
    #[serde(serialize_with = "num_opt")]
    pub output_tokens: Option<f64>,
    /// Σ `usage.cache_read_input_tokens` (`null` when no turn reported it).
    #[serde(serialize_with = "num_opt")]
    pub cache_read_tokens: Option<f64>,
    /// Σ `usage.cache_creation_input_tokens`.
    #[serde(serialize_with = "num_opt")]
    pub cache_creation_tokens: Option<f64>,
    /// Thinking tokens, exact plus estimated.
    #[serde(serialize_with = "num_opt")]
    pub thinking_tokens: Option<f64>,
    /// True when part of `thinkingTokens` is estimated from thinking text.
    pub thinking_estimated: bool,
    /// cache read / (input + cache read + cache creation).
    #[serde(serialize_with = "num_opt")]
    pub cache_hit_rate: Option<f64>,
    /// Nearest-rank p50 of `timing.ttft_ms`.
    #[serde(rename = "ttftP50Ms", serialize_with = "num_opt")]
    pub ttft_p50_ms: Option<f64>,
    /// Nearest-rank p95 of `timing.ttft_ms`.
    #[serde(rename = "ttftP95Ms", serialize_with = "num_opt")]
    pub ttft_p95_ms: Option<f64>,
    /// Estimated cost in USD at list prices.
    #[serde(serialize_with = "num_opt")]
    pub est_cost_usd: Option<f64>,
    /// True when the price table has this model.
    pub priced: bool,
}

/// Totals over every model.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelSummary {
    /// Distinct models.
    pub models: u64,
    /// Non-echoed assistant turns.
    pub assistant_turns: u64,
    /// Every turn record (any role, echoed included).
    pub turns: u64,
    /// Echoed assistant turns (excluded from every other number).
    pub echoed_turns: u64,
    /// Σ input tokens.
    #[serde(serialize_with = "num_opt")]
    pub input_tokens: Option<f64>,
    /// Σ output tokens.
    #[serde(serialize_with = "num_opt")]
    pub output_tokens: Option<f64>,
    /// Σ cache-read tokens.
    #[serde(serialize_with = "num_opt")]
    pub cache_read_tokens: Option<f64>,
    /// Σ cache-creation tokens.
    #[serde(serialize_with = "num_opt")]
    pub cache_creation_tokens: Option<f64>,
    /// Σ `usage.thinking_tokens`.
    #[serde(serialize_with = "num_opt")]
    pub thinking_exact_tokens: Option<f64>,
    /// Σ thinking estimated from thinking text (characters / 4).
    #[serde(serialize_with = "num_opt")]
    pub thinking_estimated_tokens: Option<f64>,
    /// Overall cache hit rate.
    #[serde(serialize_with = "num_opt")]
    pub cache_hit_rate: Option<f64>,
    /// Σ `timing.duration_ms`.
    #[serde(serialize_with = "num_opt")]
    pub total_model_time_ms: Option<f64>,
}

/// Estimated cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    /// Always true: list-price estimates, never billing data.
    pub estimated: bool,
    /// Always `"USD"`.
    pub currency: &'static str,
    /// Σ of priced models; `null` when nothing could be priced.
    #[serde(serialize_with = "num_opt")]
    pub total_usd: Option<f64>,
    /// True when some models with usage are unpriced: the total is a lower bound.
    pub partial: bool,
    /// Models with usage that the table does not price.
    pub unpriced_models: Vec<String>,
    /// The price table's date.
    pub as_of: Option<String>,
    /// The price table's provenance.
    pub source: String,
}

/// One tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolRow {
    /// Tool name (`(unknown)` when a call named none).
    pub name: String,
    /// Executions, answered or not (input-required rounds excluded).
    pub calls: u64,
    /// Failed executions.
    pub errors: u64,
    /// Nearest-rank p50 latency of answered calls, ms.
    #[serde(serialize_with = "num_opt")]
    pub p50_ms: Option<f64>,
    /// Nearest-rank p95 latency, ms.
    #[serde(serialize_with = "num_opt")]
    pub p95_ms: Option<f64>,
    /// Where the calls were seen.
    pub origin: Origin,
    /// Calls without an answer.
    pub pending: u64,
}

/// A warning.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Warning {
    /// Stable machine-readable code (`multiple-sessions-in-file`, …).
    pub code: &'static str,
    /// What it means, naming the file.
    pub message: String,
    /// For `multiple-sessions-in-file`: how many sessions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sessions: Option<u64>,
}

/// Writes a finite number as an integer when it is whole, as JavaScript does.
fn num_opt<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(x) if x.is_finite() => {
            if x.fract() == 0.0 && x.abs() < 9.007_199_254_740_992e15 {
                s.serialize_i64(*x as i64)
            } else {
                s.serialize_f64(*x)
            }
        }
        _ => s.serialize_none(),
    }
}

/// Milliseconds between two timestamps, at least 0.
fn ms_between(a: Option<&str>, b: Option<&str>) -> Option<f64> {
    super::tools::ms_between(a, b).map(|ms| ms as f64)
}

/// The session facts of several traces as one: the earliest start and latest end (and
/// the time between them), the first label, command, producer, end reason and exit code
/// found in the order given, distinct kinds joined with `+`, and summed counts.
pub(crate) fn merge_sessions(sessions: &[Session]) -> Option<Session> {
    let first = sessions.first()?;
    if sessions.len() == 1 {
        return Some(first.clone());
    }
    let first_some = |f: fn(&Session) -> Option<&String>| sessions.iter().find_map(f).cloned();
    let started_at = sessions
        .iter()
        .filter_map(|s| s.started_at.as_deref())
        .min()
        .map(str::to_owned);
    let ended_at = sessions
        .iter()
        .filter_map(|s| s.ended_at.as_deref())
        .max()
        .map(str::to_owned);
    let mut kinds: Vec<&str> = Vec::new();
    for k in sessions.iter().filter_map(|s| s.kind.as_deref()) {
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    let mut records = LineCounts::default();
    for s in sessions {
        records.add(&s.records);
    }
    Some(Session {
        label: first_some(|s| s.label.as_ref()),
        kind: (!kinds.is_empty()).then(|| kinds.join("+")),
        duration_ms: ms_between(started_at.as_deref(), ended_at.as_deref())
            .or_else(|| sessions.iter().find_map(|s| s.duration_ms)),
        started_at,
        ended_at,
        command: sessions.iter().find_map(|s| s.command.clone()),
        producer: first_some(|s| s.producer.as_ref()),
        records,
        skipped_lines: sessions.iter().map(|s| s.skipped_lines).sum(),
        end_reason: first_some(|s| s.end_reason.as_ref()),
        exit_code: sessions.iter().find_map(|s| s.exit_code),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_numbers_are_integers_and_unknown_is_null() {
        #[derive(Serialize)]
        struct P {
            #[serde(serialize_with = "num_opt")]
            a: Option<f64>,
            #[serde(serialize_with = "num_opt")]
            b: Option<f64>,
            #[serde(serialize_with = "num_opt")]
            c: Option<f64>,
            #[serde(serialize_with = "num_opt")]
            d: Option<f64>,
        }
        let p = P {
            a: Some(1000.0),
            b: Some(0.25),
            c: None,
            d: Some(f64::NAN),
        };
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            r#"{"a":1000,"b":0.25,"c":null,"d":null}"#
        );
    }
}
