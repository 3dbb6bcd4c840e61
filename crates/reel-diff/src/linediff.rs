//! A unified line diff (Myers' O(ND) algorithm) of two pretty-printed values.
//!
//! The pointer list says *where* two payloads differ; the unified diff shows it in
//! context, as people read diffs. Values shown are small (one message), but a result can
//! be a large document, so the search is bounded: past [`MAX_EDIT_DISTANCE`] edits the
//! diff gives up on finding the shortest script and shows the rest as one replaced
//! block, which is still a correct (if longer) diff.

/// Edits beyond which the shortest-script search stops (a limit on time and memory:
/// the search keeps O(D²) state).
pub const MAX_EDIT_DISTANCE: usize = 2000;

/// One line of a diff script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op<'a> {
    /// In both.
    Same(&'a str),
    /// Only on the left (removed).
    Left(&'a str),
    /// Only on the right (added).
    Right(&'a str),
}

/// The edit script turning `left` into `right`, line by line.
pub fn script<'a>(left: &[&'a str], right: &[&'a str]) -> Vec<Op<'a>> {
    // Common prefix and suffix first: most diffs here are one changed value.
    let pre = left.iter().zip(right).take_while(|(a, b)| a == b).count();
    let suf = left[pre..]
        .iter()
        .rev()
        .zip(right[pre..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (l, r) = (&left[pre..left.len() - suf], &right[pre..right.len() - suf]);
    let mut out: Vec<Op<'a>> = left[..pre].iter().map(|s| Op::Same(s)).collect();
    out.extend(middle(l, r));
    out.extend(left[left.len() - suf..].iter().map(|s| Op::Same(s)));
    out
}

fn middle<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<Op<'a>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    if n == 0 || m == 0 {
        return replaced(a, b);
    }
    let max = (n + m).min(MAX_EDIT_DISTANCE as isize);
    let off = max + 1;
    let mut v = vec![0isize; (2 * max + 3) as usize];
    let mut trace: Vec<Vec<isize>> = Vec::new();
    let mut found = None;
    'outer: for d in 0..=max {
        trace.push(v.clone());
        let mut k = -d;
        while k <= d {
            let down = k == -d || (k != d && v[(off + k - 1) as usize] < v[(off + k + 1) as usize]);
            let mut x = if down {
                v[(off + k + 1) as usize]
            } else {
                v[(off + k - 1) as usize] + 1
            };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[(off + k) as usize] = x;
            if x >= n && y >= m {
                found = Some(d);
                break 'outer;
            }
            k += 2;
        }
    }
    let Some(d_end) = found else {
        return replaced(a, b);
    };
    // Walk the trace back from (n, m): each step is a snake of equal lines, then the
    // one edit that step d made (none for d = 0).
    let mut ops = Vec::new();
    let (mut x, mut y) = (n, m);
    for d in (0..=d_end).rev() {
        let v = &trace[d as usize];
        let k = x - y;
        let down = k == -d || (k != d && v[(off + k - 1) as usize] < v[(off + k + 1) as usize]);
        let pk = if down { k + 1 } else { k - 1 };
        let (px, py) = if d == 0 {
            (0, 0)
        } else {
            let px = v[(off + pk) as usize];
            (px, px - pk)
        };
        while x > px && y > py {
            x -= 1;
            y -= 1;
            ops.push(Op::Same(a[x as usize]));
        }
        if d > 0 {
            if x == px {
                ops.push(Op::Right(b[py as usize]));
            } else {
                ops.push(Op::Left(a[px as usize]));
            }
            x = px;
            y = py;
        }
    }
    ops.reverse();
    ops
}

fn replaced<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<Op<'a>> {
    a.iter()
        .map(|s| Op::Left(s))
        .chain(b.iter().map(|s| Op::Right(s)))
        .collect()
}

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
    let l: Vec<&str> = left.lines().collect();
    let r: Vec<&str> = right.lines().collect();
    let ops = script(&l, &r);
    // Positions (0-based) of each op in left and right.
    let mut pos = Vec::with_capacity(ops.len());
    let (mut li, mut ri) = (0usize, 0usize);
    for op in &ops {
        pos.push((li, ri));
        match op {
            Op::Same(_) => {
                li += 1;
                ri += 1;
            }
            Op::Left(_) => li += 1,
            Op::Right(_) => ri += 1,
        }
    }
    let changed: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, o)| !matches!(o, Op::Same(_)))
        .map(|(i, _)| i)
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < changed.len() {
        let start = changed[i].saturating_sub(context);
        let mut end = changed[i];
        while i < changed.len() && changed[i] <= end + 2 * context + 1 {
            end = changed[i];
            i += 1;
        }
        let end = (end + context + 1).min(ops.len());
        let (l0, r0) = pos[start];
        let (mut nl, mut nr) = (0, 0);
        let mut body = Vec::new();
        for op in &ops[start..end] {
            match op {
                Op::Same(s) => {
                    nl += 1;
                    nr += 1;
                    body.push(HunkLine::Same((*s).to_owned()));
                }
                Op::Left(s) => {
                    nl += 1;
                    body.push(HunkLine::Left((*s).to_owned()));
                }
                Op::Right(s) => {
                    nr += 1;
                    body.push(HunkLine::Right((*s).to_owned()));
                }
            }
        }
        out.push(HunkLine::Header(format!(
            "@@ -{},{nl} +{},{nr} @@",
            l0 + usize::from(nl > 0),
            r0 + usize::from(nr > 0)
        )));
        out.extend(body);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply<'a>(ops: &[Op<'a>]) -> (Vec<&'a str>, Vec<&'a str>) {
        let mut l = Vec::new();
        let mut r = Vec::new();
        for op in ops {
            match op {
                Op::Same(s) => {
                    l.push(*s);
                    r.push(*s);
                }
                Op::Left(s) => l.push(*s),
                Op::Right(s) => r.push(*s),
            }
        }
        (l, r)
    }

    #[test]
    fn scripts_rebuild_both_sides_and_are_short() {
        let cases: &[(&str, &str)] = &[
            ("a b c a b b a", "c b a b a c"),
            ("", "x y"),
            ("x y", ""),
            ("a b c", "a b c"),
            ("a x c d", "a y c d"),
            ("1 2 3 4 5 6", "0 1 2 4 5 6 7"),
        ];
        for (a, b) in cases {
            let a: Vec<&str> = a.split_whitespace().collect();
            let b: Vec<&str> = b.split_whitespace().collect();
            let ops = script(&a, &b);
            assert_eq!(apply(&ops), (a.clone(), b.clone()));
            let edits = ops.iter().filter(|o| !matches!(o, Op::Same(_))).count();
            if a == ["a", "b", "c", "a", "b", "b", "a"] {
                // Myers' classic example: the shortest script has 5 edits.
                assert_eq!(edits, 5);
            }
            if a == ["a", "x", "c", "d"] {
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
    }
}
