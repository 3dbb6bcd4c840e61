//! Rust source reduced to its code: comments and the insides of string and character
//! literals blanked (line breaks kept, so line numbers hold), and items under
//! `#[cfg(test)]` blanked too. What is left can be searched for keywords, braces and
//! paths without a parser being fooled by a `{` in a string or a `fn` in a comment.

/// `src` with comments and literal contents replaced by spaces (line breaks kept).
pub fn strip(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |n| i + n);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0usize;
                let mut j = i;
                while j < b.len() {
                    if b[j..].starts_with(b"/*") {
                        depth += 1;
                        j += 2;
                    } else if b[j..].starts_with(b"*/") {
                        depth -= 1;
                        j += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        j += 1;
                    }
                }
                blank(&mut out, i, j.min(b.len()));
                i = j;
            }
            b'r' if !ident_before(b, i) && raw_start(b, i + 1).is_some() => {
                let (hashes, open) = raw_start(b, i + 1).unwrap_or_default();
                let close: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat_n(b'#', hashes))
                    .collect();
                let body = open + 1;
                let end = find(b, body, &close).unwrap_or(b.len());
                blank(&mut out, body, end);
                i = (end + close.len()).min(b.len());
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                blank(&mut out, i + 1, j.min(b.len()));
                i = j + 1;
            }
            b'\'' => i = char_or_lifetime(b, i, &mut out),
            _ => i += 1,
        }
    }
    // Only ASCII bytes were written over whole characters' bytes, so a character's
    // bytes are either all kept or all blanked.
    String::from_utf8(out).unwrap_or_default()
}

/// Past a `'` at `i`: a character literal is blanked, a lifetime left as it is.
fn char_or_lifetime(b: &[u8], i: usize, out: &mut [u8]) -> usize {
    let mut j = i + 1;
    if b.get(j) == Some(&b'\\') {
        j += 2;
        while j < b.len() && b[j] != b'\'' {
            j += 1;
        }
    } else {
        // One character, however many bytes, then the closing quote.
        let len = b.get(j).map_or(1, |c| utf8_len(*c));
        if b.get(j + len) != Some(&b'\'') {
            return i + 1; // a lifetime or a label
        }
        j += len;
    }
    for c in &mut out[i + 1..j.min(b.len())] {
        *c = b' ';
    }
    j + 1
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xF0.. => 4,
        0xE0.. => 3,
        0xC0.. => 2,
        _ => 1,
    }
}

fn ident_before(b: &[u8], i: usize) -> bool {
    i > 0 && {
        let c = b[i - 1];
        // `br"…"` is a raw byte string: the `b` is the literal's own.
        (c.is_ascii_alphanumeric() || c == b'_')
            && !(c == b'b' && (i < 2 || !(b[i - 2].is_ascii_alphanumeric() || b[i - 2] == b'_')))
    }
}

/// After an `r`: the number of `#` and where the opening quote is, when a raw string
/// starts here.
fn raw_start(b: &[u8], mut i: usize) -> Option<(usize, usize)> {
    let mut hashes = 0;
    while b.get(i) == Some(&b'#') {
        hashes += 1;
        i += 1;
    }
    (b.get(i) == Some(&b'"')).then_some((hashes, i))
}

fn find(hay: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    hay.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p)
}

/// Blanks every item under a test-only `cfg` (`#[cfg(test)]`, `#[cfg(all(test, …))]`)
/// in stripped code, and returns the names of the test modules declared out of line
/// (`#[cfg(test)] mod tests;`).
pub fn drop_tests(code: &mut String) -> Vec<String> {
    let mut out_of_line = Vec::new();
    let mut from = 0;
    while let Some((at, item)) = next_test_attr(code, from) {
        let b = code.as_bytes();
        // The item ends at its first `;` or at the brace that closes its first `{`.
        let semi = b[item..].iter().position(|&c| c == b';').map(|p| item + p);
        let brace = b[item..].iter().position(|&c| c == b'{').map(|p| item + p);
        let end = match (semi, brace) {
            (Some(s), o) if o.is_none_or(|o| s < o) => {
                if let Some(name) = code[item..s].trim().strip_prefix("mod ") {
                    out_of_line.push(name.trim().to_owned());
                }
                s + 1
            }
            (_, Some(o)) => matching_brace(b, o).map_or(b.len(), |e| e + 1),
            _ => b.len(),
        };
        let blanked: String = code[at..end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        code.replace_range(at..end, &blanked);
        from = at + blanked.len();
    }
    out_of_line
}

/// The next test-only `cfg` attribute at or after `from`: where it starts and where the
/// item under it does. A predicate is test-only when it is `test`, or an `all(…)` with
/// `test` among its terms (`not(test)` and `any(test, …)` are not).
fn next_test_attr(code: &str, mut from: usize) -> Option<(usize, usize)> {
    const OPEN: &str = "#[cfg(";
    while let Some(at) = code[from..].find(OPEN).map(|p| from + p) {
        let pred_start = at + OPEN.len();
        let close = code[pred_start..].find(")]").map(|p| pred_start + p)?;
        let pred: String = code[pred_start..close].split_whitespace().collect();
        let test_only = pred == "test"
            || pred
                .strip_prefix("all(")
                .and_then(|p| p.strip_suffix(')'))
                .is_some_and(|terms| terms.split(',').any(|t| t == "test"));
        if test_only {
            return Some((at, close + ")]".len()));
        }
        from = close;
    }
    None
}

/// The index of the `}` that closes the `{` at `open`, in stripped code.
pub fn matching_brace(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &c) in b.iter().enumerate().skip(open) {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// How many lines of `code[from..to]` hold code.
pub fn code_lines(code: &str) -> usize {
    code.lines().filter(|l| !l.trim().is_empty()).count()
}

/// Whether `c` can be part of an identifier.
pub fn ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_literals_are_blanked_and_lines_kept() {
        let src = "fn a() { // { not code\n  let s = \"{ }\"; /* {\n */ let c = '{'; }\n\
                   fn b<'a>(x: &'a str) -> &'a str { r#\"}\"# ; x }\n";
        let s = strip(src);
        assert_eq!(s.lines().count(), src.lines().count());
        assert_eq!(s.matches('{').count(), 2, "{s}");
        assert_eq!(s.matches('}').count(), 2, "{s}");
        assert!(s.contains("<'a>") && s.contains("&'a str"), "{s}");
    }

    #[test]
    fn test_items_are_blanked_and_out_of_line_test_modules_named() {
        let mut s = strip(
            "fn keep() {}\n#[cfg(test)]\nmod tests {\n fn gone() {}\n}\n#[cfg(test)]\nmod more;\n",
        );
        let out = drop_tests(&mut s);
        assert_eq!(out, ["more"]);
        assert!(s.contains("keep") && !s.contains("gone"), "{s}");
        assert_eq!(code_lines(&s), 1);
    }

    #[test]
    fn a_test_only_all_is_a_test_and_not_or_any_is_not() {
        let mut s = strip(
            "#[cfg(all(test, unix))]\nmod a { fn gone() {} }\n\
             #[cfg(not(test))]\nfn kept_not() {}\n\
             #[cfg(any(test, feature = \"x\"))]\nfn kept_any() {}\n\
             #[cfg( all( target_os = \"linux\" , test ) )]\nmod b;\n",
        );
        let out = drop_tests(&mut s);
        assert_eq!(out, ["b"]);
        assert!(!s.contains("gone"), "{s}");
        assert!(s.contains("kept_not") && s.contains("kept_any"), "{s}");
    }
}
