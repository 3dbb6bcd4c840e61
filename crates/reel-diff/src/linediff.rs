//! A unified line diff of two pretty-printed values, by `similar`.
//!
//! The pointer list says *where* two payloads differ; the unified diff shows it in
//! context, as people read diffs. Values shown are small (one message), but a result can
//! be a large document, so the search is bounded by [`DEADLINE`]: past it the diff
//! stops looking for the shortest script and shows what is left as a replaced block,
//! which is still a correct (if longer) diff.

use std::time::{Duration, Instant};

use similar::{Algorithm, ChangeTag, TextDiff};

/// How long one diff may search for the shortest edit script.
pub const DEADLINE: Duration = Duration::from_millis(500);

/// A hunk line of a unified diff, for a renderer to colour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HunkLine {
    /// `@@ -l,n +r,m @@`.
    Header(String),
    /// ` text`.
    Same(String),
    /// `-text`.
    Left(String),
    /// `+text`.
    Right(String),
}

/// The hunks of a unified diff of two texts with `context` lines around each change;
/// empty when the texts are equal.
pub fn unified(left: &str, right: &str, context: usize) -> Vec<HunkLine> {
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .deadline(Instant::now() + DEADLINE)
        .diff_lines(left, right);
    let mut out = Vec::new();
    for group in diff.grouped_ops(context) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old = first.old_range().start..last.old_range().end;
        let new = first.new_range().start..last.new_range().end;
        // Unified diff numbering: 1-based, or the line before an empty range.
        out.push(HunkLine::Header(format!(
            "@@ -{},{} +{},{} @@",
            old.start + usize::from(!old.is_empty()),
            old.len(),
            new.start + usize::from(!new.is_empty()),
            new.len()
        )));
        for op in &group {
            for change in diff.iter_changes(op) {
                let text = change.value().trim_end_matches(['\n', '\r']).to_owned();
                out.push(match change.tag() {
                    ChangeTag::Equal => HunkLine::Same(text),
                    ChangeTag::Delete => HunkLine::Left(text),
                    ChangeTag::Insert => HunkLine::Right(text),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both sides, rebuilt from the hunks of a diff with all lines as context.
    fn sides(h: &[HunkLine]) -> (Vec<&str>, Vec<&str>) {
        let mut l = Vec::new();
        let mut r = Vec::new();
        for line in h {
            match line {
                HunkLine::Header(_) => {}
                HunkLine::Same(s) => {
                    l.push(s.as_str());
                    r.push(s.as_str());
                }
                HunkLine::Left(s) => l.push(s.as_str()),
                HunkLine::Right(s) => r.push(s.as_str()),
            }
        }
        (l, r)
    }

    #[test]
    fn hunks_rebuild_both_sides_and_are_short() {
        let cases: &[(&str, &str)] = &[
            ("a b c a b b a", "c b a b a c"),
            ("", "x y"),
            ("x y", ""),
            ("a x c d", "a y c d"),
            ("1 2 3 4 5 6", "0 1 2 4 5 6 7"),
        ];
        for (a, b) in cases {
            let text = |s: &str| {
                s.split_whitespace()
                    .map(|w| format!("{w}\n"))
                    .collect::<String>()
            };
            let (a, b) = (text(a), text(b));
            let h = unified(&a, &b, usize::MAX / 4);
            let (l, r) = sides(&h);
            assert_eq!(l, a.lines().collect::<Vec<_>>());
            assert_eq!(r, b.lines().collect::<Vec<_>>());
            let edits = h
                .iter()
                .filter(|x| matches!(x, HunkLine::Left(_) | HunkLine::Right(_)))
                .count();
            if a.starts_with("a\nb\nc\na") {
                // Myers' classic example: the shortest script has 5 edits.
                assert_eq!(edits, 5);
            }
            if a.starts_with("a\nx") {
                assert_eq!(edits, 2);
            }
        }
    }

    #[test]
    fn unified_hunks_have_context_and_counts() {
        let l = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        let r = "1\n2\n3\n4\nFIVE\n6\n7\n8\n9\n";
        let h = unified(l, r, 2);
        assert_eq!(
            h,
            vec![
                HunkLine::Header("@@ -3,5 +3,5 @@".into()),
                HunkLine::Same("3".into()),
                HunkLine::Same("4".into()),
                HunkLine::Left("5".into()),
                HunkLine::Right("FIVE".into()),
                HunkLine::Same("6".into()),
                HunkLine::Same("7".into()),
            ]
        );
        assert!(unified(l, l, 3).is_empty());
        // An empty side is numbered from the line before.
        assert_eq!(
            unified("", "x\n", 3)[0],
            HunkLine::Header("@@ -0,0 +1,1 @@".into())
        );
    }

    /// Two large, wholly different documents: the deadline bounds the search, and the
    /// hunks still rebuild both sides.
    #[test]
    fn a_large_diff_is_bounded_and_still_correct() {
        let a: String = (0..20_000).map(|i| format!("a{i}\n")).collect();
        let b: String = (0..20_000)
            .map(|i| format!("b{}\n", i * 7 % 20_000))
            .collect();
        let h = unified(&a, &b, 1);
        let (l, r) = sides(&h);
        assert_eq!(l.len(), 20_000);
        assert_eq!(r.len(), 20_000);
    }
}
