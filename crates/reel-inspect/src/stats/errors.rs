//! The errors list of a report: failed tool calls, JSON-RPC errors on other requests,
//! and `llm.error` events, sorted by `t`.
//!
//! Limits (so that memory stays bounded on a trace where every call fails): the list
//! keeps the [`MAX_ERRORS`] earliest errors by `t`, and each message is cut to
//! [`MAX_MESSAGE_BYTES`] bytes (on a character boundary, ending in `…`). How many were
//! left out is reported as a warning.

use serde::Serialize;

/// The most errors a report lists.
pub const MAX_ERRORS: usize = 10_000;
/// The longest error message kept, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 500;

/// Where an error was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ErrorSource {
    /// A failed tool call (JSON-RPC error, `result.isError`, or `tool_result.is_error`).
    Tool,
    /// A JSON-RPC error answering any other request.
    Jsonrpc,
    /// An `llm.error` event.
    Llm,
}

/// One entry of the errors list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorRow {
    /// When: the request's `t` for tool calls, the line's `t` otherwise.
    pub t: Option<String>,
    /// Where it was seen.
    pub source: ErrorSource,
    /// The tool, the method (or `id N`, `(notification)`), or the LLM endpoint.
    pub name: String,
    /// What went wrong.
    pub message: String,
}

/// The errors collected so far, bounded.
#[derive(Debug, Default)]
pub(crate) struct ErrorList {
    rows: Vec<ErrorRow>,
    /// Errors left out because the list was full.
    pub dropped: u64,
}

impl ErrorList {
    pub fn push(&mut self, mut row: ErrorRow) {
        truncate(&mut row.message);
        self.rows.push(row);
        // Compacting a quarter over the limit bounds memory and keeps sorting rare.
        if self.rows.len() >= MAX_ERRORS + MAX_ERRORS / 4 {
            self.compact();
        }
    }

    fn compact(&mut self) {
        sort(&mut self.rows);
        if self.rows.len() > MAX_ERRORS {
            self.dropped += (self.rows.len() - MAX_ERRORS) as u64;
            self.rows.truncate(MAX_ERRORS);
        }
    }

    /// The list, sorted by `t` (missing `t` first, as the reference sorts `""`).
    pub fn finish(mut self) -> (Vec<ErrorRow>, u64) {
        self.compact();
        (self.rows, self.dropped)
    }
}

fn sort(rows: &mut [ErrorRow]) {
    rows.sort_by(|a, b| {
        a.t.as_deref()
            .unwrap_or("")
            .cmp(b.t.as_deref().unwrap_or(""))
    });
}

fn truncate(message: &mut String) {
    if message.len() <= MAX_MESSAGE_BYTES {
        return;
    }
    let mut end = MAX_MESSAGE_BYTES;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    message.truncate(end);
    message.push('…');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(t: &str) -> ErrorRow {
        ErrorRow {
            t: Some(t.to_owned()),
            source: ErrorSource::Tool,
            name: "x".into(),
            message: "é".repeat(MAX_MESSAGE_BYTES),
        }
    }

    #[test]
    fn keeps_the_earliest_and_counts_the_rest() {
        let mut l = ErrorList::default();
        for i in (0..MAX_ERRORS + 5).rev() {
            l.push(row(&format!("{i:08}")));
        }
        let (rows, dropped) = l.finish();
        assert_eq!(rows.len(), MAX_ERRORS);
        assert_eq!(dropped, 5);
        assert_eq!(rows[0].t.as_deref(), Some("00000000"));
        assert!(rows[0].message.ends_with('…'));
        assert!(rows[0].message.len() <= MAX_MESSAGE_BYTES + '…'.len_utf8());
    }
}
