//! A session's files: its sub-agent files found, and all of them streamed and merged in
//! time order.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::turns::Converter;
use crate::{Entry, Fault, Item, Lines, read_lines};
use reel_trace::Timestamp;

/// How deep below `<session-id>/subagents/` sub-agent files are looked for.
const SUBAGENT_DEPTH: usize = 3;

/// The sub-agent files of the session at `path` (none for a sub-agent file itself).
pub(super) fn subagent_files(path: &Path, session_id: Option<&str>) -> Vec<PathBuf> {
    let is_agent_file = |p: &Path| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("agent-") && n.ends_with(".jsonl"))
    };
    if is_agent_file(path) {
        return Vec::new();
    }
    let (Some(dir), Some(stem)) = (path.parent(), path.file_stem()) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    collect_agent_files(&dir.join(stem).join("subagents"), 0, &mut found);
    // The layout before 2.1.2: beside the session, naming it as their `sessionId`.
    if let (Some(id), Ok(entries)) = (session_id, std::fs::read_dir(dir)) {
        for e in entries.flatten() {
            let p = e.path();
            if p != path
                && is_agent_file(&p)
                && e.file_type().is_ok_and(|t| t.is_file())
                && first_session_id(&p).as_deref() == Some(id)
            {
                found.push(p);
            }
        }
    }
    found.sort();
    found
}

pub(super) fn collect_agent_files(dir: &Path, depth: usize, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(ty) = e.file_type() else { continue };
        let p = e.path();
        if ty.is_dir() && depth < SUBAGENT_DEPTH {
            collect_agent_files(&p, depth + 1, found);
        } else if ty.is_file()
            && p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("agent-") && n.ends_with(".jsonl"))
        {
            found.push(p);
        }
    }
}

/// The `sessionId` of the first line of `path` that has one (among its first lines).
pub(super) fn first_session_id(path: &Path) -> Option<String> {
    let mut lines = read_lines(path).ok()?;
    for _ in 0..8 {
        let (_, bytes) = lines.next_line().ok()??;
        if let Ok(m) = serde_json::from_slice::<Map<String, Value>>(&crate::large::skeleton(bytes))
            && let Some(id) = m.get("sessionId").and_then(Value::as_str)
        {
            return Some(id.to_owned());
        }
    }
    None
}

/// A sub-agent file not opened yet.
pub(super) struct Waiting {
    pub(super) start: Timestamp,
    pub(super) path: PathBuf,
    pub(super) split: HashMap<String, (u64, u64)>,
}

/// One file's items, streamed.
pub(super) struct FileStream {
    pub(super) lines: Lines,
    pub(super) conv: Converter,
    pub(super) done: bool,
}

impl FileStream {
    pub(super) fn open(
        path: &Path,
        started: Timestamp,
        split: HashMap<String, (u64, u64)>,
    ) -> std::io::Result<FileStream> {
        Ok(FileStream {
            lines: read_lines(path)?,
            conv: Converter::new(started).with_split(split),
            done: false,
        })
    }
}

impl Iterator for FileStream {
    type Item = Result<Item, Fault>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(out) = self.conv.pop() {
                return Some(out.map_err(|(p, bytes)| Fault::Bad(p, bytes)));
            }
            if self.done {
                return None;
            }
            match self.lines.next_entry() {
                Ok(Some(Entry::TooLong { line, bytes })) => {
                    return Some(Err(Fault::TooLong { line, bytes }));
                }
                Ok(Some(Entry::Line(number, bytes))) => self.conv.line(number, bytes),
                Ok(None) => {
                    self.done = true;
                    self.conv.finish();
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(Fault::Io(e)));
                }
            }
        }
    }
}

/// A stream and its next item.
pub(super) struct Head {
    pub(super) stream: FileStream,
    pub(super) next: Option<Result<Item, Fault>>,
}

impl Head {
    pub(super) fn new(stream: FileStream) -> Head {
        Head { stream, next: None }
    }
}

/// The session's file and its sub-agents' files, merged in time order (the session
/// first on equal times).
pub(super) struct Merge {
    pub(super) active: Vec<Head>,
    pub(super) waiting: Vec<Waiting>,
    pub(super) started: Timestamp,
}

impl Iterator for Merge {
    type Item = Result<Item, Fault>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            for h in &mut self.active {
                if h.next.is_none() {
                    h.next = h.stream.next();
                }
            }
            self.active.retain(|h| h.next.is_some());
            // A fault goes out at once; otherwise the earliest item.
            let mut best: Option<(usize, Option<Timestamp>)> = None;
            for (i, h) in self.active.iter().enumerate() {
                let t = match &h.next {
                    Some(Ok(item)) => Some(item.t()),
                    _ => None,
                };
                let better = match (best, t) {
                    (None, _) => true,
                    (Some((_, Some(_))), None) => true,
                    (Some((_, Some(b))), Some(t)) => t < b,
                    (Some((_, None)), _) => false,
                };
                if better {
                    best = Some((i, t));
                }
            }
            let due = self.waiting.last().is_some_and(|w| match best {
                None => true,
                Some((_, Some(t))) => w.start < t,
                Some((_, None)) => false,
            });
            if due && let Some(w) = self.waiting.pop() {
                match FileStream::open(&w.path, self.started, w.split) {
                    Ok(s) => self.active.push(Head::new(s)),
                    Err(e) => return Some(Err(Fault::Io(e))),
                }
                continue;
            }
            let (i, _) = best?;
            return self.active[i].next.take();
        }
    }
}
