//! Building a rule set from what the user asked for (flags and an mcp-tape rule file)
//! or from what a trace says it was redacted with (`meta.redaction`), and writing it
//! back out. Both directions go through one `Builder`, so a description always
//! rebuilds the same rules, and every pattern is compiled where its origin is known
//! (errors name the flag, the file and rule, or the member).

use std::path::{Path, PathBuf};

use regex::Regex;
use serde_json::{Map, Value, json};

use super::builtin::{KNOWN_RULES_VERSIONS, RULES_VERSION};
use super::builtin::{Revision, ValueRule};
use super::compiled::Compiled;
use super::error::{PatternSource, RedactError};
use super::names;
use super::path::{self, Action, PathRules};
use super::splice::MARKER;
use super::text::ValueRules;

/// What the user asked for (the recorder's flags).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedactionConfig {
    /// Apply the built-in rules (`--no-redact-defaults` turns this off).
    pub defaults: bool,
    /// Extra patterns, in order (`--redact REGEX`).
    pub patterns: Vec<String>,
    /// An mcp-tape rule file (`--redact-file PATH`).
    pub rule_file: Option<PathBuf>,
}

impl Default for RedactionConfig {
    /// The built-in rules and nothing else.
    fn default() -> Self {
        RedactionConfig {
            defaults: true,
            patterns: Vec::new(),
            rule_file: None,
        }
    }
}

/// The name of the key rule in `meta.redaction.builtin`.
pub(super) const SECRET_KEYS: &str = "secret-keys";

/// The rule set as data: what `describe` writes and `from_description` reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RuleSet {
    /// What the built-in names mean.
    revision: Revision,
    defaults: bool,
    secret_keys: bool,
    values: Vec<ValueRule>,
    patterns: Vec<String>,
    paths: Vec<String>,
    truncate: Vec<(String, usize)>,
    drop_media: Option<usize>,
}

impl RuleSet {
    /// `meta.redaction`: the version, the marker, the built-in rules by name (the
    /// version fixes what each does), and the user's rules inlined.
    pub(super) fn describe(&self) -> Value {
        let mut builtin: Vec<&str> = Vec::new();
        if self.secret_keys {
            builtin.push(SECRET_KEYS);
        }
        builtin.extend(self.values.iter().map(|r| r.name()));
        let mut out = Map::new();
        out.insert("rules".into(), json!(self.revision.name()));
        out.insert("marker".into(), json!(MARKER));
        out.insert("defaults".into(), json!(self.defaults));
        out.insert("builtin".into(), json!(builtin));
        if self.secret_keys {
            out.insert("keys".into(), json!(names::listed_words(self.revision)));
        }
        out.insert("patterns".into(), json!(self.patterns));
        out.insert("paths".into(), json!(self.paths));
        if !self.truncate.is_empty() {
            let rules: Vec<Value> = self
                .truncate
                .iter()
                .map(|(path, max)| json!({ "path": path, "maxBytes": max }))
                .collect();
            out.insert("truncate".into(), Value::Array(rules));
        }
        if let Some(min) = self.drop_media {
            out.insert("dropMedia".into(), json!({ "minBytes": min }));
        }
        Value::Object(out)
    }
}

/// Builds the rule set the user asked for: built-ins (unless `defaults` is off or
/// the rule file says `"extends": null`), then the rule file's rules, then the
/// `--redact` patterns.
pub(super) fn from_config(config: &RedactionConfig) -> Result<(RuleSet, Compiled), RedactError> {
    let file = match &config.rule_file {
        Some(path) => Some(RuleFile::read(path)?),
        None => None,
    };
    let extends = file.as_ref().is_none_or(|f| f.extends_default);
    let mut builder = Builder::new(config.defaults && extends);
    if let Some(file) = &file {
        file.apply(&mut builder)?;
    }
    for (i, pattern) in config.patterns.iter().enumerate() {
        builder.pattern(pattern, || PatternSource::Flag { index: i + 1 })?;
    }
    Ok(builder.finish())
}

/// Rebuilds a rule set from a trace's `meta.redaction`.
pub(super) fn from_description(description: &Value) -> Result<(RuleSet, Compiled), RedactError> {
    let obj = description
        .as_object()
        .ok_or_else(|| bad_description("expected an object".into()))?;
    let revision = described_revision(obj)?;
    let mut builder = described_builtins(obj, revision)?;
    for (index, pattern) in optional_strings(obj, "patterns")
        .map_err(bad_description)?
        .into_iter()
        .enumerate()
    {
        builder.pattern(pattern, || PatternSource::Description { index })?;
    }
    for path in optional_strings(obj, "paths").map_err(bad_description)? {
        builder
            .path(path, Action::Redact)
            .map_err(|e| bad_description(format!("path {path:?}: {e}")))?;
    }
    if let Some(list) = obj.get("truncate") {
        described_truncate(&mut builder, list)?;
    }
    if let Some(media) = obj.get("dropMedia") {
        let min = media
            .get("minBytes")
            .and_then(Value::as_u64)
            .filter(|&n| n > 0);
        let min =
            min.ok_or_else(|| bad_description("`dropMedia` needs a positive `minBytes`".into()))?;
        builder.drop_media(to_usize(min));
    }
    Ok(builder.finish())
}

fn bad_description(problem: String) -> RedactError {
    RedactError::BadDescription { problem }
}

/// The revision a description names in `rules`, with the marker it says it wrote.
fn described_revision(obj: &Map<String, Value>) -> Result<Revision, RedactError> {
    let bad = bad_description;
    let revision = match obj.get("rules") {
        Some(Value::String(v)) => Revision::from_name(v).ok_or_else(|| {
            bad(format!(
                "rule set {v:?} is not known to this reel (it knows {}); a newer reel wrote this trace",
                KNOWN_RULES_VERSIONS.join(", ")
            ))
        })?,
        Some(other) => {
            return Err(bad(format!(
                "`rules` must name the rule-set version (e.g. {RULES_VERSION:?}), not {other}"
            )));
        }
        None => return Err(bad("`rules` (the rule-set version) is missing".into())),
    };
    if let Some(marker) = obj.get("marker") {
        if marker != MARKER {
            return Err(bad(format!("marker {marker} is not {MARKER:?}")));
        }
    }
    Ok(revision)
}

/// A builder with the built-ins a description lists in `builtin` (all of `revision`'s
/// when it lists none and says `defaults`).
fn described_builtins(
    obj: &Map<String, Value>,
    revision: Revision,
) -> Result<Builder, RedactError> {
    let defaults = obj
        .get("defaults")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut builder = Builder::of(revision, false);
    builder.set.defaults = defaults;
    match obj.get("builtin") {
        None if defaults => builder = Builder::of(revision, true),
        None => {}
        Some(list) => {
            for name in strings(list, "builtin").map_err(bad_description)? {
                if name == SECRET_KEYS {
                    builder.set.secret_keys = true;
                } else {
                    let rule = ValueRule::from_name(name, revision).ok_or_else(|| {
                        bad_description(format!(
                            "unknown built-in rule {name:?} (in {})",
                            revision.name()
                        ))
                    })?;
                    builder.enable(rule);
                }
            }
        }
    }
    Ok(builder)
}

/// The `truncate` rules of a description: each a `path` and a positive `maxBytes`.
fn described_truncate(builder: &mut Builder, list: &Value) -> Result<(), RedactError> {
    let list = list
        .as_array()
        .ok_or_else(|| bad_description("`truncate` must be an array".into()))?;
    for rule in list {
        let path = rule.get("path").and_then(Value::as_str);
        let max = rule
            .get("maxBytes")
            .and_then(Value::as_u64)
            .filter(|&n| n > 0);
        let (Some(path), Some(max)) = (path, max) else {
            return Err(bad_description(format!(
                "truncate rule {rule} needs `path` and a positive `maxBytes`"
            )));
        };
        builder
            .path(path, Action::Truncate(to_usize(max)))
            .map_err(|e| bad_description(format!("path {path:?}: {e}")))?;
    }
    Ok(())
}

/// Collects a rule set, compiling as it goes so errors point at their origin.
pub(super) struct Builder {
    set: RuleSet,
    user: Vec<Regex>,
    paths: PathRules,
}

impl Builder {
    /// The current revision's built-ins (all of them, or none).
    pub(super) fn new(defaults: bool) -> Builder {
        Builder::of(Revision::CURRENT, defaults)
    }

    fn of(revision: Revision, defaults: bool) -> Builder {
        let set = RuleSet {
            revision,
            defaults,
            secret_keys: defaults,
            values: if defaults {
                revision.rules().to_vec()
            } else {
                Vec::new()
            },
            patterns: Vec::new(),
            paths: Vec::new(),
            truncate: Vec::new(),
            drop_media: None,
        };
        Builder {
            set,
            user: Vec::new(),
            paths: PathRules::default(),
        }
    }

    fn enable(&mut self, rule: ValueRule) {
        if !self.set.values.contains(&rule) {
            self.set.values.push(rule);
            self.set.values.sort();
        }
    }

    fn pattern(
        &mut self,
        pattern: &str,
        at: impl Fn() -> PatternSource,
    ) -> Result<(), RedactError> {
        // mcp-tape's own spelling of a built-in (some use look-behind) maps to ours.
        if let Some(rule) = self
            .set
            .revision
            .rules()
            .iter()
            .copied()
            .find(|r| r.mcp_tape_spellings().contains(&pattern))
        {
            self.enable(rule);
            return Ok(());
        }
        let re = Regex::new(pattern).map_err(|e| RedactError::BadPattern {
            at: at(),
            pattern: pattern.to_owned(),
            reason: pattern_hint(&e),
        })?;
        if re.is_match("") {
            return Err(RedactError::EmptyMatch {
                at: at(),
                pattern: pattern.to_owned(),
            });
        }
        if !self.set.patterns.iter().any(|p| p == pattern) {
            self.set.patterns.push(pattern.to_owned());
            self.user.push(re);
        }
        Ok(())
    }

    fn path(&mut self, path: &str, action: Action) -> Result<(), path::PathError> {
        self.paths.add(path, action)?;
        match action {
            Action::Redact => self.set.paths.push(path.to_owned()),
            Action::Truncate(max) => self.set.truncate.push((path.to_owned(), max)),
        }
        Ok(())
    }

    fn drop_media(&mut self, min: usize) {
        self.set.drop_media = Some(self.set.drop_media.map_or(min, |m| m.min(min)));
    }

    /// The rule set as data, and compiled.
    pub(super) fn finish(self) -> (RuleSet, Compiled) {
        let revision = self.set.revision;
        let compiled = Compiled {
            revision,
            secret_keys: self.set.secret_keys,
            values: ValueRules::new(revision, &self.set.values, self.user),
            paths: self.paths,
            drop_media: self.set.drop_media,
        };
        (self.set, compiled)
    }
}

/// A parsed rule file.
struct RuleFile {
    path: PathBuf,
    extends_default: bool,
    rules: Vec<Value>,
}

impl RuleFile {
    fn read(path: &Path) -> Result<RuleFile, RedactError> {
        let text = std::fs::read_to_string(path).map_err(|source| RedactError::RuleFileRead {
            path: path.to_owned(),
            source,
        })?;
        let value: Value =
            serde_json::from_str(&text).map_err(|e| RedactError::RuleFileSyntax {
                path: path.to_owned(),
                line: e.line(),
                column: e.column(),
                message: e.to_string(),
            })?;
        let shape = |problem: &str| RedactError::RuleFileShape {
            path: path.to_owned(),
            problem: problem.to_owned(),
        };
        let Value::Object(mut top) = value else {
            return Err(shape(
                r#"expected an object like {"extends": "default", "rules": [{"type": "regex", "pattern": "…"}]}"#,
            ));
        };
        let extends_default = match top.get("extends") {
            None => true,
            Some(Value::String(s)) if s == "default" => true,
            Some(Value::Null) => false,
            Some(other) => {
                return Err(shape(&format!(
                    r#"`extends` must be "default" (keep the built-in rules) or null (drop them), not {other}"#
                )));
            }
        };
        let rules = match top.remove("rules") {
            None => Vec::new(),
            Some(Value::Array(rules)) => rules,
            Some(_) => return Err(shape("`rules` must be an array of rules")),
        };
        Ok(RuleFile {
            path: path.to_owned(),
            extends_default,
            rules,
        })
    }

    fn apply(&self, builder: &mut Builder) -> Result<(), RedactError> {
        for (i, rule) in self.rules.iter().enumerate() {
            let n = i + 1;
            let bad = |problem: String| RedactError::BadRule {
                path: self.path.clone(),
                rule: n,
                problem,
            };
            let field = |name: &str| rule.get(name).and_then(Value::as_str);
            let positive = |name: &str| {
                rule.get(name)
                    .and_then(Value::as_u64)
                    .filter(|&n| n > 0)
                    .map(to_usize)
                    .ok_or_else(|| {
                        bad(format!("`{name}` must be a positive whole number of bytes"))
                    })
            };
            let kind = match rule.get("type") {
                Some(Value::String(kind)) => kind.as_str(),
                Some(_) | None if !rule.is_object() => {
                    return Err(bad(format!("expected an object, found {rule}")));
                }
                _ => {
                    return Err(bad(
                        "`type` is missing (path, regex, truncate or drop-media)".into(),
                    ));
                }
            };
            match kind {
                "path" | "truncate" => {
                    let path = field("path")
                        .ok_or_else(|| bad("`path` is missing (e.g. \"$..customer_id\")".into()))?;
                    let action = if kind == "path" {
                        Action::Redact
                    } else {
                        Action::Truncate(positive("maxBytes")?)
                    };
                    builder
                        .path(path, action)
                        .map_err(|e| bad(format!("path {path:?}: {e}")))?;
                }
                "regex" => {
                    let pattern =
                        field("pattern").ok_or_else(|| bad("`pattern` is missing".into()))?;
                    builder.pattern(pattern, || PatternSource::RuleFile {
                        path: self.path.clone(),
                        rule: n,
                    })?;
                }
                "drop-media" => builder.drop_media(positive("minBytes")?),
                other => {
                    return Err(bad(format!(
                        "unknown rule type {other:?} (known: path, regex, truncate, drop-media); \
                         reel refuses to skip a rule it does not understand"
                    )));
                }
            }
        }
        Ok(())
    }
}

fn pattern_hint(e: &regex::Error) -> String {
    let message = e.to_string();
    if message.contains("look-around") || message.contains("backreference") {
        format!(
            "{message}\n(reel uses Rust regex syntax, which runs in linear time: no look-around, no backreferences)"
        )
    } else {
        message
    }
}

fn strings<'v>(value: &'v Value, name: &str) -> Result<Vec<&'v str>, String> {
    let list = value
        .as_array()
        .ok_or_else(|| format!("`{name}` must be an array of strings"))?;
    list.iter()
        .map(|v| {
            v.as_str()
                .ok_or_else(|| format!("`{name}` must be an array of strings, found {v}"))
        })
        .collect()
}

fn optional_strings<'v>(obj: &'v Map<String, Value>, name: &str) -> Result<Vec<&'v str>, String> {
    obj.get(name).map_or(Ok(Vec::new()), |v| strings(v, name))
}

fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}
