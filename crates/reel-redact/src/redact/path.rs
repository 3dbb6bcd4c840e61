//! Rule-file paths: mcp-tape's JSONPath subset (`$`, `.field`, `[i]`, `[*]`,
//! `..field`), matched while the JSON walker descends, not by evaluating paths
//! against a parsed tree.
//!
//! Why an automaton: the walker sees one member at a time and never holds the
//! document. Every path compiles to a chain of segments; the walker keeps, per open
//! container, the set of chain positions reached so far and advances it by one member
//! name or index per step. Cost per step is bounded by the total number of segments,
//! so matching stays linear in the input whatever the nesting depth.
//!
//! Accepted syntax (what mcp-tape's rule files use, plus quoted names):
//! `$` the message itself; `.name` a member; `['name']` / `["name"]` a member whose
//! name holds `.`, `[` or `]`; `[3]` an array element; `[*]` or `.*` any member or
//! element; `..name` / `..['name']` a member at any depth below.

use std::fmt;

/// What a matched path does to its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// Every string in the value becomes the marker.
    Redact,
    /// A string longer than this many bytes is cut (rule type `truncate`).
    Truncate(usize),
}

/// One step of a compiled path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    Field(String),
    Index(usize),
    Any,
    Descend(String),
    /// End of a path: reaching it means the path matched.
    End(Action),
}

/// A member of the container being walked: a key or an array index.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Member<'k> {
    Key(&'k str),
    Index(usize),
}

/// Why a path does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PathError {
    /// 1-based character column in the path.
    pub column: usize,
    pub problem: &'static str,
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.column, self.problem)
    }
}

/// All path rules of a rule set, compiled into one segment array.
#[derive(Debug, Clone, Default)]
pub(crate) struct PathRules {
    segs: Vec<Seg>,
    /// Index of each rule's first segment.
    starts: Vec<u32>,
}

impl PathRules {
    /// Adds one rule.
    pub(crate) fn add(&mut self, path: &str, action: Action) -> Result<(), PathError> {
        let mut segs = parse(path)?;
        segs.push(Seg::End(action));
        self.starts.push(self.segs.len() as u32);
        self.segs.extend(segs);
        Ok(())
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// The state set at the document root.
    pub(crate) fn root(&self, out: &mut Vec<u32>) {
        out.extend_from_slice(&self.starts);
    }

    /// Appends to `out` the states reached from `from` by stepping into `member`.
    /// `out` must not alias `from`; the caller keeps both on one stack.
    pub(crate) fn step(&self, from: &[u32], member: Member<'_>, out: &mut Vec<u32>) {
        let base = out.len();
        let push = |out: &mut Vec<u32>, s: u32| {
            if !out[base..].contains(&s) {
                out.push(s);
            }
        };
        for &state in from {
            match (&self.segs[state as usize], member) {
                (Seg::Field(name), Member::Key(k)) if name == k => push(out, state + 1),
                (Seg::Index(i), Member::Index(j)) if *i == j => push(out, state + 1),
                (Seg::Any, _) => push(out, state + 1),
                (Seg::Descend(name), m) => {
                    push(out, state);
                    if matches!(m, Member::Key(k) if k == name) {
                        push(out, state + 1);
                    }
                }
                _ => {}
            }
        }
    }

    /// The action of a completed path in `states`; `Redact` wins over `Truncate`, and
    /// of two truncations the shorter one.
    pub(crate) fn accepted(&self, states: &[u32]) -> Option<Action> {
        let mut best = None;
        for &state in states {
            if let Seg::End(action) = self.segs[state as usize] {
                best = match (best, action) {
                    (_, Action::Redact) => return Some(Action::Redact),
                    (Some(Action::Truncate(a)), Action::Truncate(b)) => {
                        Some(Action::Truncate(a.min(b)))
                    }
                    (_, a) => Some(a),
                };
            }
        }
        best
    }
}

/// Parses one path into segments (without the final `End`).
fn parse(path: &str) -> Result<Vec<Seg>, PathError> {
    let chars: Vec<char> = path.chars().collect();
    let err = |at: usize, problem| PathError {
        column: at + 1,
        problem,
    };
    if chars.first() != Some(&'$') {
        return Err(err(0, "a path starts with `$` (the message)"));
    }
    let mut segs = Vec::new();
    let mut i = 1;
    while i < chars.len() {
        match chars[i] {
            '.' if chars.get(i + 1) == Some(&'.') => {
                i += 2;
                let name = match chars.get(i) {
                    Some('[') => {
                        let (name, next) = bracket(&chars, i).map_err(|(at, p)| err(at, p))?;
                        match name {
                            Bracket::Name(n) => {
                                i = next;
                                n
                            }
                            _ => {
                                return Err(err(
                                    i,
                                    "`..` takes a member name, not an index or `*`",
                                ));
                            }
                        }
                    }
                    Some('*') => {
                        return Err(err(i, "`..*` is not supported (it would match everything)"));
                    }
                    _ => {
                        let (name, next) = bare_name(&chars, i).map_err(|(at, p)| err(at, p))?;
                        i = next;
                        name
                    }
                };
                segs.push(Seg::Descend(name));
            }
            '.' => {
                i += 1;
                if chars.get(i) == Some(&'*') {
                    segs.push(Seg::Any);
                    i += 1;
                } else {
                    let (name, next) = bare_name(&chars, i).map_err(|(at, p)| err(at, p))?;
                    segs.push(Seg::Field(name));
                    i = next;
                }
            }
            '[' => {
                let (b, next) = bracket(&chars, i).map_err(|(at, p)| err(at, p))?;
                segs.push(match b {
                    Bracket::Name(n) => Seg::Field(n),
                    Bracket::Index(n) => Seg::Index(n),
                    Bracket::Any => Seg::Any,
                });
                i = next;
            }
            _ => return Err(err(i, "expected `.`, `..` or `[` here")),
        }
    }
    Ok(segs)
}

enum Bracket {
    Name(String),
    Index(usize),
    Any,
}

type Parsed<T> = Result<(T, usize), (usize, &'static str)>;

/// A bare member name after `.`: up to the next `.` or `[`.
fn bare_name(chars: &[char], at: usize) -> Parsed<String> {
    let end = chars[at..]
        .iter()
        .position(|c| matches!(c, '.' | '['))
        .map_or(chars.len(), |p| at + p);
    let name: String = chars[at..end].iter().collect();
    if name.is_empty() {
        return Err((at, "a member name is missing"));
    }
    if name.contains(']') {
        return Err((at, "`]` without `[`"));
    }
    Ok((name, end))
}

/// `[*]`, `[12]`, `['name']` or `["name"]` starting at `[`.
fn bracket(chars: &[char], at: usize) -> Parsed<Bracket> {
    let close = |from: usize| -> Result<usize, (usize, &'static str)> {
        chars[from..]
            .iter()
            .position(|&c| c == ']')
            .map(|p| from + p)
            .ok_or((at, "`[` is never closed"))
    };
    match chars.get(at + 1) {
        Some(&q @ ('\'' | '"')) => {
            let end = chars[at + 2..]
                .iter()
                .position(|&c| c == q)
                .map(|p| at + 2 + p)
                .ok_or((at + 1, "the quoted name is never closed"))?;
            if chars.get(end + 1) != Some(&']') {
                return Err((end + 1, "expected `]` after the quoted name"));
            }
            Ok((Bracket::Name(chars[at + 2..end].iter().collect()), end + 2))
        }
        Some('*') => {
            if chars.get(at + 2) != Some(&']') {
                return Err((at + 2, "expected `]` after `*`"));
            }
            Ok((Bracket::Any, at + 3))
        }
        _ => {
            let end = close(at + 1)?;
            let inner: String = chars[at + 1..end].iter().collect();
            if inner.is_empty() || !inner.bytes().all(|b| b.is_ascii_digit()) {
                return Err((
                    at + 1,
                    "inside `[ ]`: an index (0, 1, …), `*` or a quoted name",
                ));
            }
            let index = inner.parse().map_err(|_| (at + 1, "index too large"))?;
            Ok((Bracket::Index(index), end + 1))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(path: &str, walk: &[Member<'_>]) -> bool {
        let mut rules = PathRules::default();
        rules
            .add(path, Action::Redact)
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut states = Vec::new();
        rules.root(&mut states);
        for m in walk {
            let mut next = Vec::new();
            rules.step(&states, *m, &mut next);
            states = next;
        }
        rules.accepted(&states) == Some(Action::Redact)
    }

    use Member::{Index as I, Key as K};

    #[test]
    fn paths_match_like_mcp_tape() {
        let walk = [K("params"), K("arguments"), K("api_key")];
        assert!(matches("$.params.arguments.api_key", &walk));
        assert!(!matches("$.params.arguments.api_key", &walk[..2]));
        assert!(matches("$..api_key", &walk));
        assert!(matches("$..arguments.api_key", &walk));
        assert!(!matches("$..params.api_key", &walk));
        assert!(matches("$.params.*.api_key", &walk));
        assert!(matches("$[*][*][*]", &walk));
        assert!(matches("$", &[]));
        assert!(matches("$.a[2]", &[K("a"), I(2)]));
        assert!(!matches("$.a[2]", &[K("a"), I(1)]));
        assert!(!matches("$.a[2]", &[K("a"), K("2")]));
        assert!(matches("$['io.x/key']", &[K("io.x/key")]));
        assert!(matches("$..[\"a.b\"]", &[K("x"), I(0), K("a.b")]));
        assert!(matches(
            "$..customer_id",
            &[K("r"), I(3), K("c"), K("customer_id")]
        ));
    }

    #[test]
    fn bad_paths_say_where() {
        let bad = [
            ("params", 1),
            ("$.", 3),
            ("$.a[", 4),
            ("$.a[x]", 5),
            ("$..*", 4),
            ("$.a]", 3),
            ("$['a]", 3),
            ("$a", 2),
        ];
        for (path, column) in bad {
            let mut rules = PathRules::default();
            match rules.add(path, Action::Redact) {
                Err(e) => assert_eq!(e.column, column, "{path}: {e}"),
                Ok(()) => panic!("{path} parsed"),
            }
        }
    }
}
