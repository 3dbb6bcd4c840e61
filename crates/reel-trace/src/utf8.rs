//! UTF-8 validation of whole lines, the first step of reading every line.
//!
//! Trace payloads are full of non-ASCII text, where the standard library's validator
//! leaves its ASCII fast path; it took a quarter of `reel stats`. A SIMD validator checks
//! the common (valid) case; the standard one runs only on failure, to say where.

/// `std::str::from_utf8`, fast on valid input.
pub fn validate(bytes: &[u8]) -> Result<&str, std::str::Utf8Error> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(s) => Ok(s),
        Err(_) => std::str::from_utf8(bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::validate;

    #[test]
    fn agrees_with_the_standard_library() {
        for b in [
            &b"plain"[..],
            "d\u{e9}j\u{e0} \u{1F600}".as_bytes(),
            b"\xff",
            b"ab\xe2\x82",
            b"",
        ] {
            assert_eq!(validate(b).ok(), std::str::from_utf8(b).ok());
            if let Err(e) = validate(b) {
                assert_eq!(
                    e.valid_up_to(),
                    std::str::from_utf8(b).unwrap_err().valid_up_to()
                );
            }
        }
    }
}
