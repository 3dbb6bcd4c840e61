//! The edit of one configuration file's text: each stdio server entry wrapped in
//! `reel rec`, or put back.
//!
//! Invariants:
//! - only the bytes of wrapped entries change: every other key, comment and space of
//!   the file stays byte for byte, and in a wrapped entry every key but `command` and
//!   `args` too (`env`, `type`, `cwd`, a client's own keys);
//! - the marker member [`MARKER`] keeps the original entry *verbatim*, so uninstalling
//!   puts back its exact bytes: a file installed into and uninstalled from is the file
//!   it was, byte for byte, when nothing else changed it;
//! - installing twice changes nothing: an entry that is wrapped as it would be now is
//!   left alone; one wrapped by another reel or into another directory gets its
//!   `command` and `args` refreshed from the original.
//!
//! Remote entries (`url`, `serverUrl`, `httpUrl`, or `type` http/sse) are not wrapped:
//! the client connects to the URL itself and starts no process, so nothing of reel's
//! could run in between without turning the entry into another transport (a stdio
//! bridge would break the client's own HTTP auth flows). They are counted, and
//! `reel rec --url` records them.

use std::ffi::OsString;
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::jsonc::{self, Member, SyntaxError};
use crate::targets::{ConfigFile, Scope};

/// The member of a wrapped entry that keeps the original.
pub const MARKER: &str = "_reel";

/// Directories a client's reduced PATH has anyway: not baked into `--path-first`.
const STANDARD_PATH: [&str; 6] = [
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
];

/// How to wrap: which reel, recording where, resolving commands how.
#[derive(Clone, Debug)]
pub struct Wrapper {
    /// The reel the entries run (absolute).
    pub reel: PathBuf,
    /// The trace directory (absolute).
    pub dir: PathBuf,
    /// The PATH commands are resolved on (the installing shell's).
    pub path: OsString,
    /// The directory a project file's relative commands are relative to.
    pub project: PathBuf,
}

/// What became of the entries of one file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Entries wrapped now.
    pub wrapped: u64,
    /// Wrapped entries whose `command` and `args` were brought up to date.
    pub refreshed: u64,
    /// Entries already wrapped as they would be now.
    pub already: u64,
    /// Remote entries, left as they are.
    pub remote: u64,
    /// Entries whose command is not found (left as they are).
    pub unresolved: u64,
    /// Entries put back (uninstall).
    pub restored: u64,
}

/// An entry left as it was, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// The server's name.
    pub name: String,
    /// Why.
    pub why: String,
}

/// The new text of a file and what changed in it.
#[derive(Clone, Debug, Default)]
pub struct Edited {
    /// The file's new text.
    pub text: String,
    /// Counts.
    pub counts: Counts,
    /// Entries left alone, with the reason.
    pub skipped: Vec<Skipped>,
}

/// A file that cannot be edited.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// Not JSON (with comments).
    #[error("not JSON: {0}")]
    Syntax(#[from] SyntaxError),
    /// The document is not an object.
    #[error("not a configuration object (the file's value is not {{…}})")]
    NotAnObject,
}

/// One server entry: its name and its object's bytes.
struct Entry {
    name: String,
    span: Range<usize>,
    members: Vec<Member>,
}

impl Entry {
    fn get(&self, key: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.key == key)
    }
}

/// The server entries of `file`'s text, in file order.
fn entries(text: &str, file: &ConfigFile) -> Result<Vec<Entry>, EditError> {
    let doc = jsonc::document(text)?;
    if text.as_bytes().get(doc.start) != Some(&b'{') {
        return Err(EditError::NotAnObject);
    }
    let mut out = Vec::new();
    for table in file.tables() {
        let mut spans = vec![doc.clone()];
        for key in table {
            let mut next = Vec::new();
            for span in spans {
                for m in jsonc::members(text, span)? {
                    let is_object = text.as_bytes().get(m.value.start) == Some(&b'{');
                    if is_object && (key == "*" || m.key == key) {
                        next.push(m.value);
                    }
                }
            }
            spans = next;
        }
        for table in spans {
            for m in jsonc::members(text, table)? {
                if text.as_bytes().get(m.value.start) == Some(&b'{') {
                    let members = jsonc::members(text, m.value.clone())?;
                    out.push(Entry {
                        name: m.key,
                        span: m.value,
                        members,
                    });
                }
            }
        }
    }
    out.sort_by_key(|e| e.span.start);
    Ok(out)
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `command` as an absolute path: as given when it has a `/` (relative to `base`),
/// else the first executable of that name on `path`.
pub fn resolve(command: &str, base: &Path, path: &OsString) -> Option<PathBuf> {
    if command.contains('/') {
        let p = base.join(command);
        return is_executable(&p).then_some(p);
    }
    std::env::split_paths(path)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(command))
        .find(|p| is_executable(p))
}

/// The directories the server needs first on its PATH: the command's own (a package
/// manager's `bin` holds its interpreter too), and the interpreter's of a
/// `#!/usr/bin/env NAME` script; the standard ones left out.
fn path_first(command: &Path, path: &OsString) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = command.parent().map(Path::to_owned).into_iter().collect();
    let head = std::fs::read(command)
        .ok()
        .map(|b| b.into_iter().take(256).collect::<Vec<u8>>())
        .unwrap_or_default();
    if let Some(line) = head.strip_prefix(b"#!") {
        let line = String::from_utf8_lossy(line);
        let line = line.lines().next().unwrap_or_default();
        let mut words = line.split_whitespace();
        if words.next().is_some_and(|w| w.ends_with("/env")) {
            let interpreter = words.find(|w| !w.starts_with('-'));
            if let Some(i) = interpreter.and_then(|i| resolve(i, Path::new("/"), path)) {
                dirs.extend(i.parent().map(Path::to_owned));
            }
        }
    }
    let mut out: Vec<PathBuf> = Vec::new();
    for d in dirs {
        let standard = STANDARD_PATH.iter().any(|s| Path::new(s) == d);
        if !standard && !out.contains(&d) {
            out.push(d);
        }
    }
    out
}

/// The `command` and `args` texts of an entry wrapped from `original`'s members (in
/// `text`), or why it cannot be.
fn wrapped(
    text: &str,
    name: &str,
    original: &[Member],
    file: &ConfigFile,
    w: &Wrapper,
) -> Result<(String, String), Skip> {
    let get = |k: &str| original.iter().find(|m| m.key == k);
    let remote = ["url", "serverUrl", "httpUrl"]
        .iter()
        .any(|k| get(k).is_some())
        || get("type")
            .and_then(|m| jsonc::string(text, m.value.clone()))
            .is_some_and(|t| {
                matches!(
                    t.as_str(),
                    "http" | "sse" | "streamable-http" | "streamableHttp"
                )
            });
    let Some(command) = get("command") else {
        return Err(if remote {
            Skip::Remote
        } else {
            Skip::Other("it has no command".into())
        });
    };
    let Some(command) = jsonc::string(text, command.value.clone()) else {
        return Err(Skip::Other("its command is not a string".into()));
    };
    let args: Vec<&str> = match get("args") {
        None => Vec::new(),
        Some(m) if &text[m.value.clone()] == "null" => Vec::new(),
        Some(m) => {
            let Ok(els) = jsonc::elements(text, m.value.clone()) else {
                return Err(Skip::Other("its args is not a list".into()));
            };
            if els.iter().any(|e| jsonc::string(text, e.clone()).is_none()) {
                return Err(Skip::Other(
                    "its args holds something other than strings".into(),
                ));
            }
            els.into_iter().map(|e| &text[e]).collect()
        }
    };
    let base = match file.scope {
        Scope::Project => w.project.clone(),
        Scope::User => std::env::var_os("HOME").map_or_else(|| PathBuf::from("/"), PathBuf::from),
    };
    let Some(resolved) = resolve(&command, &base, &w.path) else {
        return Err(Skip::Unresolved(command));
    };
    let mut words = vec![
        quote("rec"),
        quote("--dir"),
        quote(&w.dir.to_string_lossy()),
        quote("--name"),
        quote(name),
    ];
    for d in path_first(&resolved, &w.path) {
        words.push(quote("--path-first"));
        words.push(quote(&d.to_string_lossy()));
    }
    words.push(quote("--"));
    words.push(quote(&resolved.to_string_lossy()));
    words.extend(args.into_iter().map(str::to_owned));
    Ok((
        quote(&w.reel.to_string_lossy()),
        format!("[{}]", words.join(", ")),
    ))
}

enum Skip {
    Remote,
    Unresolved(String),
    Other(String),
}

/// The text between members of an entry: a line break and the members' indentation, or
/// a space for an entry on one line.
fn separator(text: &str, e: &Entry) -> String {
    let Some(first) = e.members.first() else {
        return " ".into();
    };
    let before = &text[e.span.start + 1..first.key_span.start];
    match before.rfind('\n') {
        Some(n) if before[n + 1..].chars().all(|c| c == ' ' || c == '\t') => {
            format!("\n{}", &before[n + 1..])
        }
        _ => " ".into(),
    }
}

/// What the marker keeps: a note and the original entry. In a file laid out on lines,
/// the original is indented to its new depth, every line by the same number of spaces,
/// recorded as `indent` so that uninstall takes exactly those spaces off again (a line
/// break never occurs inside a JSON string, so only layout moves).
fn marker_value(text: &str, e: &Entry, sep: &str) -> String {
    let note = quote(
        "reel install wrapped this server in reel rec; reel uninstall puts back the original",
    );
    let original = &text[e.span.clone()];
    let Some(member_indent) = sep
        .strip_prefix('\n')
        .filter(|i| i.chars().all(|c| c == ' '))
    else {
        return format!("{{\"note\": {note}, \"original\": {original}}}");
    };
    let inner = format!("{member_indent}  ");
    let closing = original
        .rfind('\n')
        .map(|n| &original[n + 1..original.len() - 1])
        .filter(|i| i.chars().all(|c| c == ' '));
    let (shift, original) = match closing {
        Some(closing) if inner.len() > closing.len() => {
            let shift = inner.len() - closing.len();
            let pad = format!("\n{}", " ".repeat(shift));
            (shift, original.replace('\n', &pad))
        }
        _ => (0, original.to_owned()),
    };
    let indent = if shift > 0 {
        format!("\n{inner}\"indent\": {shift},")
    } else {
        String::new()
    };
    format!(
        "{{\n{inner}\"note\": {note},{indent}\n{inner}\"original\": {original}\n{member_indent}}}"
    )
}

/// The original entry's bytes from the marker's `original` (at `span`), its added
/// indentation (`indent`) taken off.
fn unmarked(text: &str, marker: &Member, original: Range<usize>) -> Result<String, EditError> {
    let indent = jsonc::member(text, marker.value.clone(), "indent")?
        .and_then(|m| text[m.value].parse::<usize>().ok())
        .unwrap_or(0);
    let kept = &text[original];
    if indent == 0 {
        return Ok(kept.to_owned());
    }
    let pad = format!("\n{}", " ".repeat(indent));
    Ok(kept.replace(&pad, "\n"))
}

/// Applies `edits` (non-overlapping spans and their new text) to `text`.
fn apply(text: &str, mut edits: Vec<(Range<usize>, String)>) -> String {
    edits.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
    let mut out = text.to_owned();
    for (r, new) in edits {
        out.replace_range(r, &new);
    }
    out
}

/// Wraps the stdio servers of `text` (the contents of `file`) in `reel rec`; `only`
/// limits it to those names (all when empty).
pub fn install(
    text: &str,
    file: &ConfigFile,
    w: &Wrapper,
    only: &[String],
) -> Result<Edited, EditError> {
    let mut out = Edited::default();
    let mut edits = Vec::new();
    for e in entries(text, file)? {
        if !only.is_empty() && !only.contains(&e.name) {
            continue;
        }
        let (original_members, marker) = match e.get(MARKER) {
            Some(marker) => {
                let Some(orig) = jsonc::member(text, marker.value.clone(), "original")?
                    .filter(|o| text.as_bytes().get(o.value.start) == Some(&b'{'))
                else {
                    out.skipped.push(Skipped {
                        name: e.name.clone(),
                        why: format!("its {MARKER} member holds no original entry"),
                    });
                    continue;
                };
                (jsonc::members(text, orig.value)?, true)
            }
            None => (e.members.clone(), false),
        };
        let (command, args) = match wrapped(text, &e.name, &original_members, file, w) {
            Ok(ca) => ca,
            Err(skip) => {
                let why = match skip {
                    Skip::Remote => {
                        out.counts.remote += 1;
                        "a remote server: the client connects to its URL itself and starts no process (record it with `reel rec --url URL`)".to_owned()
                    }
                    Skip::Unresolved(c) => {
                        out.counts.unresolved += 1;
                        format!("its command {c:?} is not found on PATH")
                    }
                    Skip::Other(why) => why,
                };
                out.skipped.push(Skipped {
                    name: e.name.clone(),
                    why,
                });
                continue;
            }
        };
        let Some(cur_command) = e.get("command") else {
            continue;
        };
        let cur_args = e.get("args");
        if marker {
            let same = text[cur_command.value.clone()] == command
                && cur_args.is_some_and(|a| text[a.value.clone()] == args);
            if same {
                out.counts.already += 1;
                continue;
            }
            out.counts.refreshed += 1;
        } else {
            out.counts.wrapped += 1;
        }
        let sep = separator(text, &e);
        edits.push((cur_command.value.clone(), command));
        match cur_args {
            Some(a) => edits.push((a.value.clone(), args)),
            None => edits.push((
                cur_command.value.end..cur_command.value.end,
                format!(",{sep}\"args\": {args}"),
            )),
        }
        if !marker {
            let last = e.members.last().map_or(e.span.start + 1, |m| m.value.end);
            let marker_text = format!(",{sep}\"{MARKER}\": {}", marker_value(text, &e, &sep));
            if cur_args.is_none() && last == cur_command.value.end {
                // The new `args` goes at the same place: one edit, `args` then marker.
                if let Some((r, args_edit)) = edits.pop() {
                    edits.push((r, format!("{args_edit}{marker_text}")));
                }
            } else {
                edits.push((last..last, marker_text));
            }
        }
    }
    out.text = apply(text, edits);
    Ok(out)
}

/// Puts back the original of every entry `reel install` wrapped (of `only`'s names,
/// all when empty).
pub fn uninstall(text: &str, file: &ConfigFile, only: &[String]) -> Result<Edited, EditError> {
    let mut out = Edited::default();
    let mut edits = Vec::new();
    for e in entries(text, file)? {
        if !only.is_empty() && !only.contains(&e.name) {
            continue;
        }
        let Some(marker) = e.get(MARKER) else {
            continue;
        };
        match jsonc::member(text, marker.value.clone(), "original")? {
            Some(orig) if text.as_bytes().get(orig.value.start) == Some(&b'{') => {
                edits.push((e.span.clone(), unmarked(text, marker, orig.value)?));
                out.counts.restored += 1;
            }
            _ => out.skipped.push(Skipped {
                name: e.name.clone(),
                why: format!("its {MARKER} member holds no original entry"),
            }),
        }
    }
    out.text = apply(text, edits);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::targets::Target;

    fn file() -> ConfigFile {
        ConfigFile {
            target: Target::Cursor,
            path: PathBuf::from("/x/mcp.json"),
            scope: Scope::User,
        }
    }

    fn wrapper(dir: &str) -> Wrapper {
        Wrapper {
            reel: PathBuf::from("/opt/reel"),
            dir: PathBuf::from(dir),
            path: OsString::from("/bin:/usr/bin"),
            project: PathBuf::from("/"),
        }
    }

    #[test]
    fn an_entry_without_args_gets_them_before_its_marker_and_comes_back_exactly() {
        for text in [
            "{\"mcpServers\": {\"s\": {\"command\": \"sh\"}}}",
            "{\n  \"mcpServers\": {\n    \"s\": {\n      \"command\": \"sh\"\n    }\n  }\n}\n",
            "{\n\t\"mcpServers\": {\n\t\t\"s\": {\n\t\t\t\"command\": \"sh\",\n\t\t},\n\t},\n}\n",
        ] {
            let w = install(text, &file(), &wrapper("/t"), &[]).unwrap();
            assert_eq!(w.counts.wrapped, 1, "{text}");
            let plain = w
                .text
                .replace(",\n\t\t}", "\n\t\t}")
                .replace(",\n\t}", "\n\t}")
                .replace(",\n}", "\n}");
            let v: serde_json::Value =
                serde_json::from_str(&plain).unwrap_or_else(|e| panic!("{e}\n{}", w.text));
            let e = &v["mcpServers"]["s"];
            assert_eq!(e["command"], "/opt/reel");
            assert_eq!(e["args"][0], "rec");
            assert_eq!(e["args"][5], "--");
            assert_eq!(e["args"][6], "/bin/sh");
            assert_eq!(e["_reel"]["original"]["command"], "sh");
            let back = uninstall(&w.text, &file(), &[]).unwrap();
            assert_eq!(back.counts.restored, 1);
            assert_eq!(back.text, text, "{}", w.text);
        }
    }

    #[test]
    fn a_wrapped_entry_is_refreshed_in_place_and_a_foreign_one_is_left() {
        let text = "{\"mcpServers\": {\"s\": {\"command\": \"sh\", \"args\": [\"-c\", \"x\"], \"env\": {\"K\": \"v\"}}, \"r\": {\"url\": \"http://h/mcp\"}}}";
        let once = install(text, &file(), &wrapper("/t"), &[]).unwrap();
        let again = install(&once.text, &file(), &wrapper("/t"), &[]).unwrap();
        assert_eq!(
            (again.counts.already, again.text.as_str()),
            (1, once.text.as_str())
        );
        let moved = install(&once.text, &file(), &wrapper("/u"), &[]).unwrap();
        assert_eq!(moved.counts.refreshed, 1);
        assert!(moved.text.contains("\"/u\""), "{}", moved.text);
        assert_eq!(uninstall(&moved.text, &file(), &[]).unwrap().text, text);
        assert_eq!(once.counts.remote, 1);
        // Only the named servers; a file with no marker is left as it is.
        let none = install(text, &file(), &wrapper("/t"), &["other".into()]).unwrap();
        assert_eq!(none.text, text);
        assert_eq!(uninstall(text, &file(), &[]).unwrap().text, text);
    }

    #[test]
    fn args_that_are_not_a_list_of_strings_and_unknown_commands_are_left_and_said() {
        let text = r#"{"mcpServers": {"a": {"command": "sh", "args": "x"}, "b": {"command": "sh", "args": [1]}, "c": {"command": "no-such-command-here"}, "d": {"command": 7}}}"#;
        let w = install(text, &file(), &wrapper("/t"), &[]).unwrap();
        assert_eq!(w.text, text);
        let why: Vec<&str> = w.skipped.iter().map(|s| s.why.as_str()).collect();
        assert_eq!(
            why,
            [
                "its args is not a list",
                "its args holds something other than strings",
                "its command \"no-such-command-here\" is not found on PATH",
                "its command is not a string",
            ]
        );
        assert_eq!(w.counts.unresolved, 1);
    }
}
