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
    /// Of those, entries whose other keys were changed since install: kept so.
    pub kept_changes: u64,
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
    /// The names of the entries considered (for `--server` names that match nothing).
    pub named: Vec<String>,
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
    /// The project directory of a table under `projects.<dir>` (Claude Code).
    project: Option<PathBuf>,
}

impl Entry {
    fn get(&self, key: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.key == key)
    }
}

/// The server entries of `file`'s text, in file order, and the names of those that are
/// not objects (left as they are).
fn entries(text: &str, file: &ConfigFile) -> Result<(Vec<Entry>, Vec<Skipped>), EditError> {
    let doc = jsonc::document(text)?;
    if text.as_bytes().get(doc.start) != Some(&b'{') {
        return Err(EditError::NotAnObject);
    }
    let is_object = |r: &Range<usize>| text.as_bytes().get(r.start) == Some(&b'{');
    let mut out = Vec::new();
    let mut odd = Vec::new();
    for table in file.tables() {
        // (span, the key a `*` matched)
        let mut spans: Vec<(Range<usize>, Option<String>)> = vec![(doc.clone(), None)];
        for key in table {
            let mut next = Vec::new();
            for (span, star) in spans {
                for m in jsonc::members(text, span)? {
                    if !is_object(&m.value) {
                        continue;
                    }
                    if key == "*" {
                        next.push((m.value, Some(m.key)));
                    } else if m.key == key {
                        next.push((m.value, star.clone()));
                    }
                }
            }
            spans = next;
        }
        for (table, star) in spans {
            for m in jsonc::members(text, table)? {
                if is_object(&m.value) {
                    let members = jsonc::members(text, m.value.clone())?;
                    out.push(Entry {
                        name: m.key,
                        span: m.value,
                        members,
                        project: star.clone().map(PathBuf::from),
                    });
                } else {
                    odd.push(Skipped {
                        name: m.key,
                        why: "it is not an object".into(),
                    });
                }
            }
        }
    }
    out.sort_by_key(|e| e.span.start);
    Ok((out, odd))
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
        let p: PathBuf = base
            .join(command)
            .components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .collect();
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
    e: &Entry,
    original: &[Member],
    file: &ConfigFile,
    w: &Wrapper,
) -> Result<(String, String), Skip> {
    let get = |k: &str| original.iter().find(|m| m.key == k);
    let string = |k: &str| get(k).and_then(|m| jsonc::string(text, m.value.clone()));
    let remote = ["url", "serverUrl", "httpUrl"]
        .iter()
        .any(|k| get(k).is_some())
        || string("type").is_some_and(|t| {
            matches!(
                t.as_str(),
                "http" | "sse" | "streamable-http" | "streamableHttp"
            )
        });
    if remote {
        return Err(Skip::Remote);
    }
    let Some(command) = get("command") else {
        return Err(Skip::Other("it has no command".into()));
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
    let runs_reel = Path::new(&command).file_name().is_some_and(|n| n == "reel")
        && args
            .first()
            .and_then(|a| serde_json::from_str::<String>(a).ok())
            .as_deref()
            == Some("rec");
    if runs_reel {
        return Err(Skip::Other("it already runs reel rec".into()));
    }
    // A relative command is relative to where the client starts the server: the
    // entry's `cwd`, else its project (a project file's, or Claude Code's
    // `projects.<dir>`), else the home directory.
    let base = match (string("cwd"), &e.project, file.scope) {
        (Some(cwd), _, _) => PathBuf::from(cwd),
        (None, Some(project), _) => project.clone(),
        (None, None, Scope::Project) => w.project.clone(),
        (None, None, Scope::User) => {
            std::env::var_os("HOME").map_or_else(|| PathBuf::from("/"), PathBuf::from)
        }
    };
    let Some(resolved) = resolve(&command, &base, &w.path) else {
        return Err(Skip::Unresolved(command));
    };
    let mut words = vec![
        quote("rec"),
        quote("--dir"),
        quote(&w.dir.to_string_lossy()),
        // `=`: a name that starts with `-` is still the name.
        quote(&format!("--name={}", e.name)),
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

/// The text between members of an entry: a line break (the file's own, `\r\n` kept)
/// and the members' indentation, or a space for an entry on one line.
fn separator(text: &str, e: &Entry) -> String {
    let Some(first) = e.members.first() else {
        return " ".into();
    };
    let before = &text[e.span.start + 1..first.key_span.start];
    match before.rfind('\n') {
        Some(n) if before[n + 1..].chars().all(|c| c == ' ' || c == '\t') => {
            let nl = if before[..n].ends_with('\r') {
                "\r\n"
            } else {
                "\n"
            };
            format!("{nl}{}", &before[n + 1..])
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
    let (nl, member_indent) = match sep.strip_prefix("\r\n") {
        Some(i) => ("\r\n", i),
        None => ("\n", sep.strip_prefix('\n').unwrap_or(" ")),
    };
    if sep == " " || !member_indent.chars().all(|c| c == ' ') {
        return format!("{{\"note\": {note}, \"original\": {original}}}");
    }
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
        format!("{nl}{inner}\"indent\": {shift},")
    } else {
        String::new()
    };
    format!(
        "{{{nl}{inner}\"note\": {note},{indent}{nl}{inner}\"original\": {original}{nl}{member_indent}}}"
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

/// Applies `edits` (non-overlapping spans and their new text) to `text`, in one pass.
fn apply(text: &str, mut edits: Vec<(Range<usize>, String)>) -> String {
    // Stable: two insertions at one place keep the order they were made in.
    edits.sort_by_key(|(r, _)| (r.start, r.end));
    let mut out =
        String::with_capacity(text.len() + edits.iter().map(|(_, t)| t.len()).sum::<usize>());
    let mut at = 0;
    for (r, new) in edits {
        out.push_str(&text[at..r.start]);
        out.push_str(&new);
        at = r.end;
    }
    out.push_str(&text[at..]);
    out
}

/// The original entry a wrapped entry's marker keeps: its members (and its span), or
/// why there is none.
fn marked_original(text: &str, marker: &Member) -> Result<Option<Member>, EditError> {
    if text.as_bytes().get(marker.value.start) != Some(&b'{') {
        return Ok(None);
    }
    Ok(jsonc::member(text, marker.value.clone(), "original")?
        .filter(|o| text.as_bytes().get(o.value.start) == Some(&b'{')))
}

fn no_original(name: &str) -> Skipped {
    Skipped {
        name: name.to_owned(),
        why: format!("its {MARKER} member is not one reel install wrote (no original entry in it)"),
    }
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
    let (entries, odd) = entries(text, file)?;
    out.skipped.extend(
        odd.into_iter()
            .filter(|s| only.is_empty() || only.contains(&s.name)),
    );
    for e in entries {
        if !only.is_empty() && !only.contains(&e.name) {
            continue;
        }
        out.named.push(e.name.clone());
        let (original_members, marker) = match e.get(MARKER) {
            Some(marker) => match marked_original(text, marker)? {
                Some(orig) => (jsonc::members(text, orig.value)?, true),
                None => {
                    out.skipped.push(no_original(&e.name));
                    continue;
                }
            },
            None => (e.members.clone(), false),
        };
        let (command, args) = match wrapped(text, &e, &original_members, file, w) {
            Ok(ca) => ca,
            Err(skip) => {
                let why = skip_reason(skip, &mut out.counts);
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
        wrap_edits(text, &e, cur_command, (command, args), !marker, &mut edits);
    }
    out.text = apply(text, edits);
    Ok(out)
}

/// Why a server is left alone, counting the remote and unresolved ones.
fn skip_reason(skip: Skip, counts: &mut Counts) -> String {
    match skip {
        Skip::Remote => {
            counts.remote += 1;
            "a remote server: the client connects to its URL itself and starts no process (record it with `reel rec --url URL`)".to_owned()
        }
        Skip::Unresolved(c) => {
            counts.unresolved += 1;
            format!("its command {c:?} is not found on PATH")
        }
        Skip::Other(why) => why,
    }
}

/// The edits that make entry `e` (its `command` member `cur_command`) run `command` with
/// `args` (both JSON text): its `command` and `args` replaced (or `args` added after `command`), and, when
/// `add_marker`, the marker keeping the original entry added after its last member.
fn wrap_edits(
    text: &str,
    e: &Entry,
    cur_command: &Member,
    (command, args): (String, String),
    add_marker: bool,
    edits: &mut Vec<(Range<usize>, String)>,
) {
    let sep = separator(text, e);
    edits.push((cur_command.value.clone(), command));
    let mut at_command_end = String::new();
    match e.get("args") {
        Some(a) => edits.push((a.value.clone(), args)),
        None => at_command_end = format!(",{sep}\"args\": {args}"),
    }
    if add_marker {
        let last = e.members.last().map_or(e.span.start + 1, |m| m.value.end);
        let marker_text = format!(",{sep}\"{MARKER}\": {}", marker_value(text, e, &sep));
        if last == cur_command.value.end {
            at_command_end.push_str(&marker_text);
        } else {
            edits.push((last..last, marker_text));
        }
    }
    if !at_command_end.is_empty() {
        let end = cur_command.value.end;
        edits.push((end..end, at_command_end));
    }
}

/// The members of an entry that are neither `command`, `args` nor the marker, as
/// (key, value text): what a user may have changed since install.
fn own_members<'t>(text: &'t str, members: &[Member]) -> Vec<(&'t str, &'t str)> {
    members
        .iter()
        .filter(|m| !matches!(m.key.as_str(), "command" | "args" | MARKER))
        .map(|m| (&text[m.key_span.clone()], &text[m.value.clone()]))
        .collect()
}

/// The bytes that take member `key` out of entry `e`: from the end of the member before
/// it (its comma included), or up to the next member when it is the first.
fn removal(e: &Entry, key: &str) -> Range<usize> {
    let at = e.members.iter().position(|m| m.key == key).unwrap_or(0);
    let m = &e.members[at];
    if at == 0 {
        m.key_span.start..e.members.get(1).map_or(m.value.end, |n| n.key_span.start)
    } else {
        e.members[at - 1].value.end..m.value.end
    }
}

/// Puts back the original of every entry `reel install` wrapped (of `only`'s names,
/// all when empty). An entry whose other keys were changed since (a rotated key in
/// `env`) keeps them: only its `command` and `args` are put back and the marker taken
/// out, and it is counted as [`Counts::kept_changes`].
pub fn uninstall(text: &str, file: &ConfigFile, only: &[String]) -> Result<Edited, EditError> {
    let mut out = Edited::default();
    let mut edits = Vec::new();
    let (entries, _) = entries(text, file)?;
    for e in entries {
        if !only.is_empty() && !only.contains(&e.name) {
            continue;
        }
        out.named.push(e.name.clone());
        let Some(marker) = e.get(MARKER) else {
            continue;
        };
        let Some(orig) = marked_original(text, marker)? else {
            out.skipped.push(no_original(&e.name));
            continue;
        };
        let original = unmarked(text, marker, orig.value.clone())?;
        let orig_members = jsonc::members(text, orig.value.clone())?;
        let untouched = own_members(text, &e.members)
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .eq(own_members(text, &orig_members)
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()).clone()));
        if untouched {
            edits.push((e.span.clone(), original));
            out.counts.restored += 1;
            continue;
        }
        // Changed since: command and args back, the marker out, the rest as it is now.
        let get = |ms: &[Member], k: &str| ms.iter().find(|m| m.key == k).cloned();
        if let (Some(cur), Some(was)) = (get(&e.members, "command"), get(&orig_members, "command"))
        {
            edits.push((cur.value, text[was.value].to_owned()));
        }
        match (get(&e.members, "args"), get(&orig_members, "args")) {
            (Some(cur), Some(was)) => edits.push((cur.value, text[was.value].to_owned())),
            (Some(_), None) => edits.push((removal(&e, "args"), String::new())),
            _ => {}
        }
        edits.push((removal(&e, MARKER), String::new()));
        out.counts.restored += 1;
        out.counts.kept_changes += 1;
        out.skipped.push(Skipped {
            name: e.name.clone(),
            why: "changed since install: its command and args are put back, the rest kept as it is now".into(),
        });
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
            assert_eq!(e["args"][3], "--name=s");
            assert_eq!(e["args"][4], "--");
            assert_eq!(e["args"][5], "/bin/sh");
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

#[cfg(test)]
mod review_tests {
    use super::*;
    use crate::targets::Target;

    fn cursor() -> ConfigFile {
        ConfigFile {
            target: Target::Cursor,
            path: PathBuf::from("/x/mcp.json"),
            scope: Scope::User,
        }
    }

    fn w() -> Wrapper {
        Wrapper {
            reel: PathBuf::from("/opt/reel"),
            dir: PathBuf::from("/t"),
            path: OsString::from("/bin:/usr/bin"),
            project: PathBuf::from("/"),
        }
    }

    #[test]
    fn uninstall_keeps_what_was_changed_since_install() {
        let text = "{\n  \"mcpServers\": {\n    \"s\": {\n      \"command\": \"cat\",\n      \"env\": {\"API_KEY\": \"old\"}\n    }\n  }\n}\n";
        let wrapped = install(text, &cursor(), &w(), &[]).unwrap().text;
        let rotated = wrapped.replacen("\"old\"", "\"new\"", 1);
        let back = uninstall(&rotated, &cursor(), &[]).unwrap();
        assert_eq!(back.counts.kept_changes, 1);
        let v: serde_json::Value = serde_json::from_str(&back.text).unwrap();
        assert_eq!(
            v["mcpServers"]["s"],
            serde_json::json!({"command": "cat", "env": {"API_KEY": "new"}}),
            "{}",
            back.text
        );
        // Untouched, it is byte for byte the original.
        assert_eq!(uninstall(&wrapped, &cursor(), &[]).unwrap().text, text);
    }

    #[test]
    fn remote_entries_with_a_command_reel_rec_entries_and_foreign_markers_are_left() {
        let text = r#"{"mcpServers": {"h": {"httpUrl": "http://x", "command": "cat"}, "t": {"type": "sse", "command": "cat"}, "r": {"command": "/usr/local/bin/reel", "args": ["rec", "--", "cat"]}, "m": {"command": "cat", "_reel": "my note"}, "a": ["x"], "--help": {"command": "cat"}}}"#;
        let e = install(text, &cursor(), &w(), &[]).unwrap();
        assert_eq!(e.counts.remote, 2);
        assert_eq!(e.counts.wrapped, 1, "{}", e.text);
        let why: Vec<(&str, &str)> = e
            .skipped
            .iter()
            .map(|s| (s.name.as_str(), s.why.as_str()))
            .collect();
        assert!(why.contains(&("r", "it already runs reel rec")), "{why:?}");
        assert!(
            why.iter()
                .any(|(n, w)| *n == "m" && w.contains("not one reel install wrote")),
            "{why:?}"
        );
        assert!(why.contains(&("a", "it is not an object")), "{why:?}");
        let v: serde_json::Value = serde_json::from_str(&e.text).unwrap();
        assert_eq!(v["mcpServers"]["--help"]["args"][3], "--name=--help");
        assert_eq!(uninstall(&e.text, &cursor(), &[]).unwrap().text, text);
    }

    #[test]
    fn a_claude_code_projects_relative_command_is_its_projects_and_crlf_stays_crlf() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let server = bin.join("server");
        std::fs::write(&server, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o755)).unwrap();
        let file = ConfigFile {
            target: Target::ClaudeCode,
            path: PathBuf::from("/h/.claude.json"),
            scope: Scope::User,
        };
        let text = format!(
            "{{\r\n  \"projects\": {{\r\n    {}: {{\r\n      \"mcpServers\": {{\r\n        \"s\": {{\r\n          \"command\": \"./bin/server\"\r\n        }}\r\n      }}\r\n    }}\r\n  }}\r\n}}\r\n",
            serde_json::to_string(&dir.path().to_string_lossy()).unwrap()
        );
        let e = install(&text, &file, &w(), &[]).unwrap();
        assert_eq!(e.counts.wrapped, 1, "{:?}", e.skipped);
        assert!(
            e.text
                .contains(&serde_json::to_string(&server.to_string_lossy()).unwrap()),
            "{}",
            e.text
        );
        assert!(
            !e.text.replace("\r\n", "").contains('\n'),
            "only CRLF line breaks: {:?}",
            e.text
        );
        assert_eq!(uninstall(&e.text, &file, &[]).unwrap().text, text);
    }
}
