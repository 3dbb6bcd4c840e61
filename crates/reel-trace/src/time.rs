//! Timestamps as the format writes them: UTC ISO-8601 with milliseconds and `Z`
//! (`2026-05-12T23:00:00.123Z`), and the file-name stamp derived from them
//! (`2026-05-12T23-00-00-123Z`).
//!
//! A hand-written civil-calendar conversion keeps the hot path (one stamp per recorded
//! line) free of allocation and of a date library.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, UTC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub i64);

impl Timestamp {
    /// The current time, truncated to milliseconds.
    pub fn now() -> Self {
        let ms = match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_millis() as i64,
            Err(e) => -(e.duration().as_millis() as i64),
        };
        Timestamp(ms)
    }

    /// Milliseconds since the epoch.
    pub fn millis(self) -> i64 {
        self.0
    }

    /// Writes `YYYY-MM-DDTHH:MM:SS.mmmZ` into a fixed buffer (no allocation).
    pub fn to_iso(self) -> IsoString {
        self.format(b':', b'.')
    }

    /// The file-name form `YYYY-MM-DDTHH-MM-SS-mmmZ` (`:` and `.` replaced by `-`).
    pub fn to_file_stamp(self) -> IsoString {
        self.format(b'-', b'-')
    }

    fn format(self, time_sep: u8, frac_sep: u8) -> IsoString {
        let ms = self.0.rem_euclid(1000) as u32;
        let secs = self.0.div_euclid(1000);
        let days = secs.div_euclid(86_400);
        let sod = secs.rem_euclid(86_400) as u32;
        let (y, m, d) = civil_from_days(days);
        let mut b = [0u8; 24];
        let y = y.clamp(0, 9999) as u32;
        put(&mut b[0..4], y, 4);
        b[4] = b'-';
        put(&mut b[5..7], m, 2);
        b[7] = b'-';
        put(&mut b[8..10], d, 2);
        b[10] = b'T';
        put(&mut b[11..13], sod / 3600, 2);
        b[13] = time_sep;
        put(&mut b[14..16], sod / 60 % 60, 2);
        b[16] = time_sep;
        put(&mut b[17..19], sod % 60, 2);
        b[19] = frac_sep;
        put(&mut b[20..23], ms, 3);
        b[23] = b'Z';
        IsoString(b)
    }

    /// Parses an RFC 3339 / ISO-8601 date-time with a `Z` or `±HH:MM` offset and any
    /// number of fraction digits (kept to the millisecond). Returns `None` for anything
    /// else, including impossible dates.
    pub fn parse(s: &str) -> Option<Timestamp> {
        let b = s.as_bytes();
        if b.len() < 20 {
            return None;
        }
        let num = |r: std::ops::Range<usize>| -> Option<i64> {
            let mut v = 0i64;
            for &c in b.get(r)? {
                if !c.is_ascii_digit() {
                    return None;
                }
                v = v * 10 + i64::from(c - b'0');
            }
            Some(v)
        };
        let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
        if b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
            return None;
        }
        let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
        if b[13] != b':' || b[16] != b':' {
            return None;
        }
        if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 {
            return None;
        }
        if sec > 60 {
            return None;
        }
        let mut i = 19;
        let mut ms = 0i64;
        if b.get(i) == Some(&b'.') {
            i += 1;
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                if i - start < 3 {
                    ms = ms * 10 + i64::from(b[i] - b'0');
                }
                i += 1;
            }
            let digits = i - start;
            if digits == 0 {
                return None;
            }
            for _ in digits..3 {
                ms *= 10;
            }
        }
        let offset_min = match b.get(i)? {
            b'Z' | b'z' if i + 1 == b.len() => 0,
            sign @ (b'+' | b'-') if i + 6 == b.len() && b[i + 3] == b':' => {
                let oh = num(i + 1..i + 3)?;
                let om = num(i + 4..i + 6)?;
                let v = oh * 60 + om;
                if *sign == b'+' { v } else { -v }
            }
            _ => return None,
        };
        let days = days_from_civil(y, mo as u32, d as u32);
        let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset_min * 60;
        Some(Timestamp(secs * 1000 + ms))
    }

    /// True when `s` is exactly the canonical form this crate writes
    /// (`YYYY-MM-DDTHH:MM:SS.mmmZ`).
    pub fn is_canonical(s: &str) -> bool {
        s.len() == 24 && Timestamp::parse(s).is_some_and(|t| t.to_iso().as_str() == s)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.to_iso().as_str())
    }
}

/// A formatted timestamp held on the stack.
#[derive(Clone, Copy)]
pub struct IsoString([u8; 24]);

impl IsoString {
    /// The formatted text.
    pub fn as_str(&self) -> &str {
        // Only ASCII digits and separators are ever written.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl fmt::Display for IsoString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

fn put(out: &mut [u8], mut v: u32, width: usize) {
    for i in (0..width).rev() {
        out[i] = b'0' + (v % 10) as u8;
        v /= 10;
    }
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

// Howard Hinnant's days_from_civil / civil_from_days.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(Timestamp(0).to_iso().as_str(), "1970-01-01T00:00:00.000Z");
        let t = Timestamp::parse("2026-05-12T23:00:00.123Z").unwrap();
        assert_eq!(t.to_iso().as_str(), "2026-05-12T23:00:00.123Z");
        assert_eq!(t.to_file_stamp().as_str(), "2026-05-12T23-00-00-123Z");
        let leap = Timestamp::parse("2024-02-29T12:34:56.789Z").unwrap();
        assert_eq!(leap.to_iso().as_str(), "2024-02-29T12:34:56.789Z");
    }

    #[test]
    fn parses_offsets_and_fractions() {
        let a = Timestamp::parse("2026-05-12T23:00:00Z").unwrap();
        let b = Timestamp::parse("2026-05-13T01:00:00.000000+02:00").unwrap();
        assert_eq!(a, b);
        assert_eq!(
            Timestamp::parse("2026-05-12T23:00:00.5Z").unwrap().0 - a.0,
            500
        );
    }

    #[test]
    fn rejects_malformed() {
        for s in [
            "",
            "yesterday",
            "2026-13-01T00:00:00.000Z",
            "2026-02-30T00:00:00.000Z",
            "2026-05-12T23:00:00.Z",
            "2026-05-12T23:00:00.000",
            "2026-05-12T24:00:00.000Z",
        ] {
            assert!(Timestamp::parse(s).is_none(), "{s}");
        }
        assert!(!Timestamp::is_canonical("2026-05-12T23:00:00Z"));
        assert!(Timestamp::is_canonical("2026-05-12T23:00:00.000Z"));
    }

    #[test]
    fn round_trips_across_the_calendar() {
        let mut t = -2_000_000_000_000i64;
        while t < 4_000_000_000_000 {
            let ts = Timestamp(t);
            assert_eq!(Timestamp::parse(ts.to_iso().as_str()), Some(ts));
            t += 7_777_777_777;
        }
    }
}
