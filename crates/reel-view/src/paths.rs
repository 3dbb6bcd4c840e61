//! Request paths as file-system paths under a root the viewer serves, and the one check
//! that keeps every answer inside it.
//!
//! A request path is percent-decoded once ([`decode`]) and then resolved under the root
//! ([`resolve`]) the way MMSP-RFC-0010 §7 reads `(cache_dir / subpath).resolve()`: every
//! symlink met on the way is followed (non-strict: a part that does not exist is kept as
//! written), `..` steps up from the path resolved so far, and the result is tested against
//! the root by path components ([`contains`]), never by string prefix, so a sibling such as
//! `cache2` of a root `cache` is outside. Whether a path is outside is decided before
//! whether it exists: an answer never tells what lies outside the root.
//!
//! Invariant: `root` is canonical (as `std::fs::canonicalize` returns it); every
//! [`Resolved::Inside`] path is canonical, exists, and is the root or below it.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs;
use std::path::{Component, Path, PathBuf};

/// How many symlinks one resolution follows before it gives up (as Linux's `ELOOP`).
const MAX_LINKS: usize = 40;

/// Why a request path cannot name a file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BadPath {
    /// A `%` not followed by two hex digits.
    #[error("bad percent escape at byte {at}")]
    BadEscape {
        /// Byte offset of the `%` in the raw path.
        at: usize,
    },
    /// A NUL byte, raw or as `%00`.
    #[error("holds a NUL byte")]
    Nul,
    /// The decoded bytes are not UTF-8.
    #[error("not UTF-8 once decoded")]
    NotUtf8,
}

/// Percent-decodes a URL path (the part after the mount point, e.g. `agent1/conv1.json`
/// or `..%2fx`). `+` stays `+` (this is a path, not a form). Errs on a bad escape, on a
/// NUL byte (raw or `%00`) and on a result that is not UTF-8.
pub fn decode(raw: &str) -> Result<String, BadPath> {
    let out = reel_net::http::percent_decode(raw).map_err(|at| BadPath::BadEscape { at })?;
    if out.contains(&0) {
        return Err(BadPath::Nul);
    }
    String::from_utf8(out).map_err(|_| BadPath::NotUtf8)
}

/// Where a request path leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// The root or a path below it that exists: its canonical path.
    Inside(PathBuf),
    /// Neither the root nor inside it once symlinks are resolved (answered 403); also a
    /// symlink loop and, off unix, a segment that would be read as a separator or a drive.
    Outside,
    /// Inside the root but not existing (answered 404), including a dangling symlink whose
    /// target would be inside.
    Missing,
}

/// Resolves the decoded request path `rel` under the canonical `root`.
///
/// `rel` is `/`-separated and always relative to `root`: a leading `/`, empty segments
/// and `.` are ignored, `..` steps up from the path resolved so far (so it may leave the
/// root, and come back). Backslashes are ordinary characters on unix. Every symlink is
/// followed where it is met: one inside pointing out is [`Resolved::Outside`], a dangling
/// one pointing out is `Outside`, a dangling one pointing inside is
/// [`Resolved::Missing`]. The containment test is [`contains`], after the whole path is
/// resolved, and comes before the existence test.
pub fn resolve(root: &Path, rel: &str) -> Resolved {
    let mut pending: VecDeque<OsString> = VecDeque::new();
    for seg in rel.split('/') {
        if !segment_allowed(seg) {
            return Resolved::Outside;
        }
        pending.push_back(seg.into());
    }
    let mut cur = root.to_path_buf();
    // Once a part does not exist, the rest is joined as written (non-strict resolution).
    let mut missing = false;
    let mut links = 0;
    while let Some(seg) = pending.pop_front() {
        if seg.is_empty() || seg == "." {
            continue;
        }
        if seg == ".." {
            cur.pop();
            continue;
        }
        let next = cur.join(&seg);
        if missing {
            cur = next;
            continue;
        }
        match fs::symlink_metadata(&next) {
            Ok(md) if md.file_type().is_symlink() => {
                links += 1;
                if links > MAX_LINKS {
                    return Resolved::Outside;
                }
                let Ok(target) = fs::read_link(&next) else {
                    return Resolved::Outside;
                };
                // The target's parts go first; a relative target starts from `cur`.
                if target.has_root() {
                    cur = target.ancestors().last().unwrap_or(&target).to_path_buf();
                }
                let mut front = Vec::new();
                for part in target.components() {
                    match part {
                        Component::RootDir | Component::Prefix(_) | Component::CurDir => {}
                        Component::ParentDir => front.push(OsString::from("..")),
                        Component::Normal(n) => front.push(n.to_owned()),
                    }
                }
                for part in front.into_iter().rev() {
                    pending.push_front(part);
                }
            }
            Ok(_) => cur = next,
            Err(_) => {
                missing = true;
                cur = next;
            }
        }
    }
    if !contains(root, &cur) {
        return Resolved::Outside;
    }
    if missing {
        return Resolved::Missing;
    }
    // Belt and braces: the walk above is the rule, the kernel's answer must agree.
    match fs::canonicalize(&cur) {
        Ok(canonical) if contains(root, &canonical) => Resolved::Inside(canonical),
        Ok(_) => Resolved::Outside,
        Err(_) => Resolved::Missing,
    }
}

/// Whether one request-path segment can name a file under the root at all.
#[cfg(unix)]
fn segment_allowed(_seg: &str) -> bool {
    true
}

/// Whether one request-path segment can name a file under the root at all: off unix a
/// backslash or a colon would be read as a separator or a drive.
#[cfg(not(unix))]
fn segment_allowed(seg: &str) -> bool {
    !seg.contains(['\\', ':'])
}

/// Whether the canonical `path` is `root` or inside it, compared by path components
/// (`/srv/cache2` is not inside `/srv/cache`).
pub fn contains(root: &Path, path: &Path) -> bool {
    path.starts_with(root)
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// `base/cache` (the root, canonical), `base/cache2/secret.txt`,
    /// `base/outside/secret.txt`, `cache/agent1/conv1.json`, and symlinks in the root:
    /// `link_out` → `outside`, `link_file.txt` → `outside/secret.txt`, `link_in` →
    /// `agent1`, `dangling_out` → `outside/nope`, `dangling_in` → `agent1/nope`.
    struct Tree {
        _tmp: tempfile::TempDir,
        root: PathBuf,
    }

    fn tree() -> Tree {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("cache");
        fs::create_dir_all(root.join("agent1")).unwrap();
        fs::write(root.join("agent1/conv1.json"), "{}").unwrap();
        fs::create_dir_all(base.join("cache2")).unwrap();
        fs::write(base.join("cache2/secret.txt"), "SECRET").unwrap();
        fs::create_dir_all(base.join("outside")).unwrap();
        fs::write(base.join("outside/secret.txt"), "SECRET").unwrap();
        symlink(base.join("outside"), root.join("link_out")).unwrap();
        symlink(base.join("outside/secret.txt"), root.join("link_file.txt")).unwrap();
        symlink("agent1", root.join("link_in")).unwrap();
        symlink(base.join("outside/nope"), root.join("dangling_out")).unwrap();
        symlink("agent1/nope", root.join("dangling_in")).unwrap();
        Tree { _tmp: tmp, root }
    }

    fn at(t: &Tree, raw: &str) -> Resolved {
        match decode(raw) {
            Ok(rel) => resolve(&t.root, &rel),
            Err(e) => panic!("{raw:?} did not decode: {e}"),
        }
    }

    #[test]
    fn decode_handles_escapes_and_refuses_bad_ones() {
        assert_eq!(decode("agent1/conv1.json").unwrap(), "agent1/conv1.json");
        assert_eq!(decode("..%2fx").unwrap(), "../x");
        assert_eq!(decode("%2e%2E/").unwrap(), "../");
        assert_eq!(decode("a+b%20c").unwrap(), "a+b c");
        assert_eq!(decode("%E4%BD%A0").unwrap(), "你");
        assert_eq!(decode("a%2").unwrap_err(), BadPath::BadEscape { at: 1 });
        assert_eq!(decode("%zz").unwrap_err(), BadPath::BadEscape { at: 0 });
        assert_eq!(decode("a%00b").unwrap_err(), BadPath::Nul);
        assert_eq!(decode("a\0b").unwrap_err(), BadPath::Nul);
        assert_eq!(decode("%ff").unwrap_err(), BadPath::NotUtf8);
    }

    #[test]
    fn the_root_and_paths_inside_resolve_to_canonical_paths() {
        let t = tree();
        assert_eq!(at(&t, ""), Resolved::Inside(t.root.clone()));
        assert_eq!(at(&t, "/"), Resolved::Inside(t.root.clone()));
        assert_eq!(
            at(&t, "./agent1/."),
            Resolved::Inside(t.root.join("agent1"))
        );
        assert_eq!(
            at(&t, "agent1//conv1.json"),
            Resolved::Inside(t.root.join("agent1/conv1.json"))
        );
        assert_eq!(at(&t, "agent1/.."), Resolved::Inside(t.root.clone()));
        assert_eq!(
            at(&t, "../cache/agent1"),
            Resolved::Inside(t.root.join("agent1"))
        );
    }

    #[test]
    fn dot_dot_out_of_the_root_is_outside_however_it_is_spelled() {
        let t = tree();
        for raw in [
            "..",
            "../",
            "..%2f",
            "%2e%2e/",
            "%2E%2E",
            "agent1/../..",
            "../outside/x",
        ] {
            assert_eq!(at(&t, raw), Resolved::Outside, "{raw}");
        }
    }

    #[test]
    fn a_sibling_sharing_the_prefix_is_outside() {
        let t = tree();
        assert_eq!(at(&t, "/../cache2/secret.txt"), Resolved::Outside);
        assert_eq!(at(&t, "%2e%2e/cache2/secret.txt"), Resolved::Outside);
        assert_eq!(at(&t, "../cache2"), Resolved::Outside);
        let sibling = t.root.parent().unwrap().join("cache2/secret.txt");
        assert!(!contains(&t.root, &sibling));
        assert!(
            sibling
                .to_string_lossy()
                .starts_with(&*t.root.to_string_lossy())
        );
    }

    #[test]
    fn absolute_looking_paths_are_relative_to_the_root() {
        let t = tree();
        assert_eq!(at(&t, "/etc/passwd"), Resolved::Missing);
        assert_eq!(at(&t, "//agent1"), Resolved::Inside(t.root.join("agent1")));
        let abs = t.root.join("agent1").to_string_lossy().into_owned();
        assert_eq!(at(&t, &abs), Resolved::Missing);
    }

    #[test]
    fn symlinks_out_are_outside_and_symlinks_in_are_followed() {
        let t = tree();
        assert_eq!(at(&t, "link_out"), Resolved::Outside);
        assert_eq!(at(&t, "link_out/secret.txt"), Resolved::Outside);
        assert_eq!(at(&t, "link_out/missing"), Resolved::Outside);
        assert_eq!(at(&t, "link_file.txt"), Resolved::Outside);
        assert_eq!(at(&t, "link_in"), Resolved::Inside(t.root.join("agent1")));
        assert_eq!(
            at(&t, "link_in/conv1.json"),
            Resolved::Inside(t.root.join("agent1/conv1.json"))
        );
        // `..` after a symlink steps up from its target, not from the link.
        assert_eq!(at(&t, "link_in/.."), Resolved::Inside(t.root.clone()));
        assert_eq!(
            at(&t, "link_out/../cache"),
            Resolved::Inside(t.root.clone())
        );
    }

    #[test]
    fn dangling_symlinks_are_outside_or_missing_by_their_target() {
        let t = tree();
        assert_eq!(at(&t, "dangling_out"), Resolved::Outside);
        assert_eq!(at(&t, "dangling_in"), Resolved::Missing);
        assert_eq!(at(&t, "nonexistent"), Resolved::Missing);
        assert_eq!(at(&t, "agent1/conv1.json/x"), Resolved::Missing);
    }

    #[test]
    fn a_symlink_loop_is_refused() {
        let t = tree();
        symlink("loop_b", t.root.join("loop_a")).unwrap();
        symlink("loop_a", t.root.join("loop_b")).unwrap();
        assert_eq!(at(&t, "loop_a"), Resolved::Outside);
    }

    #[test]
    fn a_root_that_is_reached_through_a_symlink_is_still_the_root() {
        let t = tree();
        symlink(".", t.root.join("self")).unwrap();
        assert_eq!(
            at(&t, "self/self/agent1"),
            Resolved::Inside(t.root.join("agent1"))
        );
    }

    #[test]
    fn backslashes_are_ordinary_characters() {
        let t = tree();
        assert_eq!(at(&t, "..\\..\\etc"), Resolved::Missing);
        fs::write(t.root.join("a\\b"), "x").unwrap();
        assert_eq!(at(&t, "a%5Cb"), Resolved::Inside(t.root.join("a\\b")));
    }
}
