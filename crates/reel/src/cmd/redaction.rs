//! The redaction flags, one shape for every command that writes a trace from outside
//! input (`rec` while recording, `redact` after the fact): `--redact REGEX`,
//! `--redact-file PATH`, `--no-redact-defaults`, turned into one `Redactor`.

use std::path::PathBuf;

use reel_redact::redact::{RedactError, RedactionConfig, Redactor};

use crate::exit::{self, coded};

/// Which rules redact.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct RuleArgs {
    /// Also redact what this regular expression matches in any string (repeatable).
    #[arg(long = "redact", value_name = "REGEX")]
    pub redact: Vec<String>,

    /// Read redaction rules from a file (JSONPath-like paths and patterns).
    #[arg(long, value_name = "PATH")]
    pub redact_file: Option<PathBuf>,

    /// Do not apply the built-in redaction rules (only --redact and --redact-file).
    #[arg(long)]
    pub no_redact_defaults: bool,
}

impl RuleArgs {
    /// The redactor the flags ask for: 64 for a pattern or rule file that is wrong, 66
    /// for a rule file that cannot be read.
    pub fn redactor(&self) -> anyhow::Result<Redactor> {
        let config = RedactionConfig {
            defaults: !self.no_redact_defaults,
            patterns: self.redact.clone(),
            rule_file: self.redact_file.clone(),
        };
        Redactor::new(&config).map_err(|e| {
            let code = match e {
                RedactError::RuleFileRead { .. } => exit::NO_INPUT,
                _ => exit::USAGE,
            };
            coded(code, e.to_string())
        })
    }
}
