//! Errors a user can act on when a rule set cannot be built: which flag, file, rule or
//! `meta.redaction` member is wrong, and how to fix it.

use std::fmt;
use std::path::PathBuf;

/// Where a pattern came from, for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PatternSource {
    /// The n-th `--redact` flag (1-based).
    Flag {
        /// 1-based position among the `--redact` flags.
        index: usize,
    },
    /// A `regex` rule of a rule file.
    RuleFile {
        /// The file.
        path: PathBuf,
        /// 1-based position in `rules`.
        rule: usize,
    },
    /// `meta.redaction.patterns` of a trace.
    Description {
        /// 0-based index in `patterns`.
        index: usize,
    },
}

impl fmt::Display for PatternSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PatternSource::Flag { index } => write!(f, "--redact (pattern {index})"),
            PatternSource::RuleFile { path, rule } => write!(f, "{}: rule {rule}", path.display()),
            PatternSource::Description { index } => write!(f, "meta.redaction.patterns[{index}]"),
        }
    }
}

/// Why a rule set cannot be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RedactError {
    /// A pattern does not compile.
    #[error("{at}: invalid pattern `{pattern}`: {reason}")]
    BadPattern {
        /// Where it came from.
        at: PatternSource,
        /// The pattern as given.
        pattern: String,
        /// What the regex compiler said, plus a hint.
        reason: String,
    },
    /// A pattern matches the empty string.
    #[error(
        "{at}: the pattern `{pattern}` matches the empty string, so it would mark every \
         position; make it require at least one character (e.g. `+` instead of `*`)"
    )]
    EmptyMatch {
        /// Where it came from.
        at: PatternSource,
        /// The pattern as given.
        pattern: String,
    },
    /// The rule file cannot be read.
    #[error("{}: cannot read the redaction rule file (--redact-file): {source}", path.display())]
    RuleFileRead {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The rule file is not JSON.
    #[error("{}:{line}:{column}: the redaction rule file is not valid JSON: {message}", path.display())]
    RuleFileSyntax {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// The rule file is JSON but not a rule file.
    #[error("{}: {problem}", path.display())]
    RuleFileShape {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// One rule of the rule file is wrong.
    #[error("{}: rule {rule}: {problem}", path.display())]
    BadRule {
        /// The file.
        path: PathBuf,
        /// 1-based position in `rules`.
        rule: usize,
        /// What is wrong.
        problem: String,
    },
    /// A trace's `meta.redaction` cannot be understood.
    #[error("meta.redaction: {problem}")]
    BadDescription {
        /// What is wrong.
        problem: String,
    },
}
