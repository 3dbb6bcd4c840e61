//! Numbers an `f64` cannot hold, kept exactly for comparison.
//!
//! `serde_json` (without `arbitrary_precision`) reads every number that is not an `i64`
//! or `u64` as an `f64`, so two different 23-digit integers, or two decimals differing
//! in their 20th digit, become the same value and compare equal. The feature that keeps
//! numbers as text is no answer here: features unify across the workspace, and with it
//! every hand-written visitor (the normaliser's scan, the tape indexer, stats) would get
//! floats as maps and every `flatten`ed or `untagged` record with a float would stop
//! parsing. So the comparison path alone reads numbers losslessly: before a message is
//! parsed for comparison ([`parse`]), each number whose text an `f64` does not hold
//! exactly is rewritten as a *marker string*, [`MARKER`] followed by the number's text.
//! [`super::json_eq`] compares a marker by the exact decimal value it spells (with
//! another marker, or with a number: `1.0000000000000000000001e22` equals
//! `10000000000000000000001`, `9007199254740993.0` equals `9007199254740993`), the match-key hash
//! treats a marker as the `f64` the scan sees (keys stay the coarser equivalence they
//! were, see `key.rs`), and [`show`] turns markers back into numbers in text meant for
//! people and programs.
//!
//! Which numbers are rewritten: an integer beyond `u64`/`i64`, or any other number whose
//! shortest `f64` form denotes another decimal value. Anything with at most 15 significant digits survives an `f64` exactly, so a message
//! without a run of 16 digits is parsed as it is, without a second look.
//!
//! Limit: a string in a message that starts with [`MARKER`] compares as the number it
//! spells.

use std::borrow::Cow;

use reel_trace::json_str::string_end;
use serde_json::Value;

/// The start of a marker string: a private-use character and a name no real value
/// starts with.
pub const MARKER: &str = "\u{F8FF}reel-number:";

/// Parses a message for comparison, numbers kept exactly.
pub fn parse(raw: &str) -> serde_json::Result<Value> {
    if !has_long_digit_run(raw) {
        return serde_json::from_str(raw);
    }
    match rewrite(raw) {
        Some(text) => serde_json::from_str(&text),
        None => serde_json::from_str(raw),
    }
}

/// The number a marker string spells, if `s` is one.
pub fn marked(s: &str) -> Option<&str> {
    s.strip_prefix(MARKER)
}

/// Two number texts (a marker's, a `serde_json::Number`'s) denote the same number.
pub fn marked_eq(a: &str, b: &str) -> bool {
    match (Decimal::of(a), Decimal::of(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// The `f64` nearest a marker's number (what a lossy reader sees).
pub fn marked_f64(s: &str) -> f64 {
    s.parse().unwrap_or(f64::NAN)
}

/// JSON text (compact or pretty) with every marker string turned back into the number
/// it spells.
pub fn show(text: &str) -> Cow<'_, str> {
    let quoted = format!("\"{MARKER}");
    if !text.contains(&quoted) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(&quoted) {
        out.push_str(&rest[..at]);
        let after = &rest[at + quoted.len()..];
        let end = after
            .find(|c: char| !is_number_char(c))
            .unwrap_or(after.len());
        if after[end..].starts_with('"') && end > 0 {
            out.push_str(&after[..end]);
            rest = &after[end + 1..];
        } else {
            out.push_str(&quoted);
            rest = after;
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// A value for output: its marker strings as JSON text turned back into numbers.
pub fn show_value(v: &Value) -> String {
    show(&v.to_string()).into_owned()
}

fn is_number_char(c: char) -> bool {
    c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E')
}

/// A cheap over-approximation of "holds a number an f64 may not keep": 16 or more
/// digits in one run of number characters, strings included.
fn has_long_digit_run(raw: &str) -> bool {
    let mut digits = 0;
    for &b in raw.as_bytes() {
        if b.is_ascii_digit() {
            digits += 1;
            if digits >= 16 {
                return true;
            }
        } else if !matches!(b, b'-' | b'+' | b'.' | b'e' | b'E') {
            digits = 0;
        }
    }
    false
}

/// `raw` with its inexact numbers rewritten; `None` when none needed it (or the text is
/// not JSON the simple lexer can follow: the parser then reports it as usual).
fn rewrite(raw: &str) -> Option<String> {
    let bytes = raw.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    let mut changed = false;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => i = string_end(bytes, i).unwrap_or(bytes.len()),
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < bytes.len() && is_number_char(char::from(bytes[i])) {
                    i += 1;
                }
                let token = raw.get(start..i)?;
                if let Some(replacement) = replacement(token) {
                    out.push_str(raw.get(copied..start)?);
                    out.push_str(&replacement);
                    copied = i;
                    changed = true;
                }
            }
            _ => i += 1,
        }
    }
    if !changed {
        return None;
    }
    out.push_str(raw.get(copied..)?);
    Some(out)
}

/// The marker string a number token becomes, when an `f64` would not hold it.
fn replacement(token: &str) -> Option<String> {
    let integer = !token.contains(['.', 'e', 'E']);
    if integer && (token.parse::<i64>().is_ok() || token.parse::<u64>().is_ok()) {
        return None;
    }
    let exact = Decimal::of(token)?;
    let f: f64 = token.parse().ok()?;
    if !f.is_finite() {
        return None;
    }
    if Decimal::of(&format!("{f:e}")) == Some(exact) {
        return None;
    }
    Some(format!("\"{MARKER}{token}\""))
}

/// A decimal number exactly: sign, significant digits (no leading or trailing zeros),
/// and the power of ten of the last digit. Zero is `(false, "", 0)`.
#[derive(Debug, PartialEq, Eq)]
struct Decimal {
    negative: bool,
    digits: String,
    exponent: i64,
}

impl Decimal {
    /// Reads a JSON number's text; `None` when it is not one.
    fn of(text: &str) -> Option<Decimal> {
        let (negative, rest) = match text.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, text),
        };
        let (mantissa, exp) = match rest.find(['e', 'E']) {
            Some(at) => (&rest[..at], rest[at + 1..].parse::<i64>().ok()?),
            None => (rest, 0),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        if int.is_empty() || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
            return None;
        }
        // JSON's grammar: no leading zero (`0999`), a digit after the point (`1.`).
        if (int.len() > 1 && int.starts_with('0')) || (mantissa.contains('.') && frac.is_empty()) {
            return None;
        }
        let all = format!("{int}{frac}");
        let exponent = exp.checked_sub(i64::try_from(frac.len()).ok()?)?;
        let trimmed_end = all.trim_end_matches('0');
        let exponent = exponent.checked_add(i64::try_from(all.len() - trimmed_end.len()).ok()?)?;
        let digits = trimmed_end.trim_start_matches('0');
        if digits.is_empty() {
            return Some(Decimal {
                negative: false,
                digits: String::new(),
                exponent: 0,
            });
        }
        Some(Decimal {
            negative,
            digits: digits.to_owned(),
            exponent,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_number_that_is_not_json_is_refused_not_marked() {
        // Found by fuzzing (fuzz/regressions/normalize): `0999.0000000000000000001`
        // (a leading zero) became a marker string, so the comparison path read a
        // message the scanner and every JSON parser refuse.
        for bad in [
            "0999.0000000000000000001",
            "1.e12345678901234567",
            "-00.12345678901234567",
        ] {
            let raw = format!(r#"{{"a":{bad}}}"#);
            assert!(parse(&raw).is_err(), "{raw}");
        }
        assert!(parse(r#"{"a":0.12345678901234567890}"#).is_ok());
    }

    #[test]
    fn numbers_an_f64_holds_are_left_alone() {
        for raw in [
            r#"{"a":1,"b":-2.5,"c":1e22,"d":0.1,"e":18446744073709551615,"f":-9223372036854775808}"#,
            r#"{"s":"12345678901234567890123","t":0.30000000000000004}"#,
            r#"[1.0000000000000000000]"#,
        ] {
            assert_eq!(
                parse(raw).unwrap(),
                serde_json::from_str::<Value>(raw).unwrap(),
                "{raw}"
            );
        }
    }

    #[test]
    fn inexact_numbers_become_markers() {
        let v = parse(r#"{"big":12345678901234567890123,"pi":3.14159265358979323846,"n":[-98765432109876543210987,9007199254740993.0],"s":"9007199254740993.0"}"#).unwrap();
        assert_eq!(v["big"], format!("{MARKER}12345678901234567890123"));
        assert_eq!(v["pi"], format!("{MARKER}3.14159265358979323846"));
        assert_eq!(v["n"][0], format!("{MARKER}-98765432109876543210987"));
        assert_eq!(v["n"][1], format!("{MARKER}9007199254740993.0"));
        assert_eq!(v["s"], "9007199254740993.0", "strings are never touched");
    }

    #[test]
    fn markers_compare_by_exact_value() {
        assert!(marked_eq(
            "12345678901234567890123",
            "1.2345678901234567890123e22"
        ));
        assert!(marked_eq(
            "1.50000000000000000001",
            "150000000000000000001e-20"
        ));
        assert!(!marked_eq(
            "12345678901234567890123",
            "12345678901234567890124"
        ));
        assert!(!marked_eq("1.5e400", "-1.5e400"));
        assert!(marked_eq("9007199254740993.0", "9007199254740993"));
        assert!(marked_eq("-0.0", "0"));
    }

    #[test]
    fn show_turns_markers_back_into_numbers() {
        let v = parse(r#"{"a":[12345678901234567890123,"x"],"b":"y"}"#).unwrap();
        assert_eq!(
            show(&v.to_string()),
            r#"{"a":[12345678901234567890123,"x"],"b":"y"}"#
        );
        let pretty = serde_json::to_string_pretty(&v).unwrap();
        assert!(show(&pretty).contains("    12345678901234567890123,\n"));
        assert_eq!(show("plain"), "plain");
    }
}
