//! A crate's module files and the file-level imports between them, read from stripped
//! source (see [`super::lex`]): `mod x;` builds the tree; `use` trees and paths that
//! start with `crate`, `super`, `self` or a child module's name are the arrows. A path
//! that lands on a module's re-export (`pub use …`) is followed to where the item is
//! defined, so `crate::Timestamp` is an arrow to `time.rs`, not to `lib.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::lex::{self, ident_byte};

/// One module file of a crate.
pub struct Module {
    /// Its path from the crate root (`[]` for the root).
    pub path: Vec<String>,
    /// Its file.
    pub file: PathBuf,
    /// Its code, stripped and with test items blanked.
    pub code: String,
    /// Out-of-line test modules it declares (their files are not production code).
    children: BTreeSet<String>,
    /// `pub use` re-exports: the name as seen here → the full path it stands for.
    reexports: BTreeMap<String, Vec<String>>,
}

/// Reads the module tree of the crate whose root file is `root`.
pub fn tree(root: &Path) -> Vec<Module> {
    let mut out = Vec::new();
    let mut todo = vec![(Vec::new(), root.to_owned())];
    while let Some((path, file)) = todo.pop() {
        let Ok(src) = std::fs::read_to_string(&file) else {
            continue;
        };
        let mut code = lex::strip(&src);
        let tests: BTreeSet<String> = lex::drop_tests(&mut code).into_iter().collect();
        let dir = module_dir(&file);
        let mut children = BTreeSet::new();
        for name in declared_modules(&code) {
            if tests.contains(&name) {
                continue;
            }
            let candidates = [
                dir.join(format!("{name}.rs")),
                dir.join(&name).join("mod.rs"),
            ];
            if let Some(f) = candidates.into_iter().find(|f| f.is_file()) {
                let mut p = path.clone();
                p.push(name.clone());
                todo.push((p, f));
                children.insert(name);
            }
        }
        let mut m = Module {
            path,
            file,
            code,
            children,
            reexports: BTreeMap::new(),
        };
        m.reexports = reexports(&m);
        out.push(m);
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// The directory a module's children live in.
fn module_dir(file: &Path) -> PathBuf {
    let parent = file.parent().unwrap_or(Path::new("."));
    match file.file_name().and_then(|n| n.to_str()) {
        Some("lib.rs" | "main.rs" | "mod.rs") => parent.to_owned(),
        _ => parent.join(file.file_stem().unwrap_or_default()),
    }
}

/// The names of `mod x;` declarations (out-of-line modules) in stripped code.
fn declared_modules(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for stmt in code.split(';') {
        let words: Vec<&str> = stmt.split_whitespace().collect();
        if let [.., "mod", name] = words.as_slice()
            && name.bytes().all(ident_byte)
        {
            out.push((*name).to_owned());
        }
    }
    out
}

/// Every `use` tree in stripped code, each expanded to its full paths (`use a::{b,
/// c::d}` is `a::b` and `a::c::d`); with whether it is a re-export (`pub use`).
fn use_paths(code: &str) -> Vec<(bool, Vec<String>)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("use ").map(|p| from + p) {
        from = at + 4;
        if at > 0 && ident_byte(b[at - 1]) {
            continue;
        }
        let Some(end) = code[at..].find(';').map(|p| at + p) else {
            break;
        };
        let before = code[..at].trim_end();
        let public = before.ends_with("pub") || before.ends_with(')') && before.contains("pub(");
        let tree = tidy(&code[at + 4..end]);
        for p in expand(&tree) {
            out.push((public, p));
        }
        from = end;
    }
    out
}

/// A use tree with no white space but the one between words (`f as g`).
fn tidy(tree: &str) -> String {
    let words: Vec<&str> = tree.split_whitespace().collect();
    let mut out = words.join(" ");
    for p in ["::", "{", "}", ","] {
        out = out
            .replace(&format!(" {p}"), p)
            .replace(&format!("{p} "), p);
    }
    out
}

/// `a::{b,c::{d,e}}` → `a::b`, `a::c::d`, `a::c::e` (`x as y` keeps `x`).
fn expand(tree: &str) -> Vec<Vec<String>> {
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or(tree);
        return vec![segments(path)];
    };
    let prefix = segments(tree[..open].trim_end_matches("::"));
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    let mut out = Vec::new();
    for part in parts.into_iter().filter(|p| !p.is_empty()) {
        for rest in expand(part) {
            let mut p = prefix.clone();
            p.extend(rest.into_iter().filter(|s| s != "self"));
            out.push(p);
        }
    }
    out
}

fn segments(path: &str) -> Vec<String> {
    path.split("::")
        .filter(|s| !s.is_empty() && *s != "*")
        .map(str::to_owned)
        .collect()
}

/// A module's re-exports: the last segment of each `pub use` path → that path made
/// absolute.
fn reexports(m: &Module) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for (public, p) in use_paths(&m.code) {
        if !public {
            continue;
        }
        if let (Some(last), Some(abs)) = (p.last().cloned(), absolute(m, &p)) {
            out.insert(last, abs);
        }
    }
    out
}

/// `path` as seen from `m`, made absolute from the crate root, when it starts in this
/// crate (`crate`, `super`, `self`, or one of `m`'s child modules).
fn absolute(m: &Module, path: &[String]) -> Option<Vec<String>> {
    let first = path.first()?;
    let mut base = m.path.clone();
    let mut rest = path;
    match first.as_str() {
        "crate" => {
            base.clear();
            rest = &path[1..];
        }
        "self" => rest = &path[1..],
        "super" => {
            while rest.first().is_some_and(|s| s == "super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        name if m.children.contains(name) => {}
        _ => return None,
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The paths in `m`'s code that start in its own crate: `use` trees and paths written
/// inline (`crate::a::f()`, `super::T`, `child::g()`).
fn referenced(m: &Module) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = use_paths(&m.code).into_iter().map(|(_, p)| p).collect();
    let b = m.code.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if !ident_byte(b[i]) || (i > 0 && (ident_byte(b[i - 1]) || b[i - 1] == b':')) {
            i += 1;
            continue;
        }
        let start = i;
        let mut end = i;
        // A path: identifiers joined by `::`.
        loop {
            while end < b.len() && ident_byte(b[end]) {
                end += 1;
            }
            if b[end..].starts_with(b"::") && b.get(end + 2).is_some_and(|&c| ident_byte(c)) {
                end += 2;
            } else {
                break;
            }
        }
        let text = &m.code[start..end];
        // `a::b::{…}` and `a::*` are use trees, read whole by `use_paths`: their prefix
        // alone names the module the tree is in, not an import of it.
        let tree = m.code[end..].starts_with("::{") || m.code[end..].starts_with("::*");
        if text.contains("::") && !tree {
            out.push(segments(text));
        }
        i = end.max(i + 1);
    }
    out
}

/// For each module, the module files it imports from: every referenced path resolved
/// to the module that defines it (re-exports followed), the module itself left out.
pub fn imports(all: &[Module]) -> Vec<BTreeSet<usize>> {
    let index: BTreeMap<&[String], usize> = all
        .iter()
        .enumerate()
        .map(|(i, m)| (m.path.as_slice(), i))
        .collect();
    let of = |(me, m): (usize, &Module)| {
        referenced(m)
            .iter()
            .filter_map(|p| absolute(m, p))
            .filter_map(|abs| resolve(&abs, all, &index))
            .filter(|&target| target != me)
            .collect()
    };
    all.iter().enumerate().map(of).collect()
}

/// The module that defines what `abs` names: its longest prefix that is a module,
/// followed through that module's re-export of the next segment (a few times at most).
fn resolve(abs: &[String], all: &[Module], index: &BTreeMap<&[String], usize>) -> Option<usize> {
    let mut path = abs.to_vec();
    for _ in 0..4 {
        let n = (0..=path.len())
            .rev()
            .find(|&n| index.contains_key(&path[..n]))?;
        let at = index[&path[..n]];
        let Some(next) = path.get(n) else {
            return Some(at);
        };
        match all[at].reexports.get(next) {
            Some(target) if target.as_slice() != &path[..=n] => {
                let mut p = target.clone();
                p.extend(path[n + 1..].iter().cloned());
                path = p;
            }
            _ => return Some(at),
        }
    }
    None
}

/// The file-level import cycles: strongly connected sets of two or more files
/// (Tarjan's algorithm), each sorted, in file order.
pub fn cycles(edges: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        edges: &'a [BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State<'_>, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in s.edges[v].iter() {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(i) if s.on_stack[w] => s.low[v] = s.low[v].min(i),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut set = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                set.push(w);
                if w == v {
                    break;
                }
            }
            if set.len() > 1 {
                set.sort_unstable();
                s.out.push(set);
            }
        }
    }
    let n = edges.len();
    let mut s = State {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out.sort();
    s.out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn use_trees_expand_to_every_path() {
        let got = expand(&tidy("crate::a::{b, c::{ d,e },\n self, f as g}"));
        let want: Vec<Vec<String>> = [
            "crate::a::b",
            "crate::a::c::d",
            "crate::a::c::e",
            "crate::a",
            "crate::a::f",
        ]
        .iter()
        .map(|p| segments(p))
        .collect();
        assert_eq!(got, want);
    }

    /// A use tree names what it imports, not the module it is written against: a child
    /// importing `super::{X}` that its parent re-exports from a sibling depends on the
    /// sibling, and the parent stays free of a back edge.
    #[test]
    fn a_use_tree_imports_its_items_not_its_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path();
        std::fs::write(
            src.join("lib.rs"),
            "mod a;\nmod b;\npub use b::X;\nfn f() { a::g(); }\n",
        )
        .unwrap();
        std::fs::write(src.join("a.rs"), "use super::{X};\npub fn g() -> X { X }\n").unwrap();
        std::fs::write(src.join("b.rs"), "pub struct X;\n").unwrap();
        let tree = tree(&src.join("lib.rs"));
        let name = |i: usize| {
            tree[i]
                .file
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        };
        let edges = imports(&tree);
        let a = tree.iter().position(|m| m.path == ["a"]).unwrap();
        let of_a: Vec<String> = edges[a].iter().map(|&i| name(i)).collect();
        assert_eq!(of_a, ["b.rs"]);
        assert!(cycles(&edges).is_empty());
    }

    #[test]
    fn a_cycle_is_found_and_a_chain_is_not() {
        let e = |v: &[usize]| v.iter().copied().collect::<BTreeSet<usize>>();
        assert_eq!(cycles(&[e(&[1]), e(&[2]), e(&[0]), e(&[0])]), [[0, 1, 2]]);
        assert!(cycles(&[e(&[1]), e(&[2]), e(&[])]).is_empty());
    }
}
