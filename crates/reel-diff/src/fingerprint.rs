//! A fast 128-bit fingerprint of bytes, for the hot path of a diff.
//!
//! A diff of two million messages cannot afford to parse and canonicalise every answer
//! twice, so each side fingerprints the *bytes* of what it will compare (a response's
//! `result`, a progress notification's params) while it reads. The fingerprint is only
//! ever used one way: equal fingerprints mean "the same bytes, so the same value after
//! normalisation" (normalisation is a pure function of the bytes). Unequal fingerprints
//! mean nothing by themselves: the two payloads are then re-read and compared exactly
//! with the shared normaliser, so spelling differences (`1.0` vs `1`, member order) never
//! become drift.
//!
//! Invariant: every [`Fingerprint::write`] call is framed by its length, so the pieces
//! `"ab" + "c"` and `"a" + "bc"` fingerprint differently. Not a cryptographic hash: two
//! traces crafted to collide could hide a drift from each other (traces are the user's
//! own files; this is not a trust boundary).

const K1: u64 = 0x9E37_79B9_7F4A_7C15;
const K2: u64 = 0xC2B2_AE3D_27D4_EB4F;

/// Two independent multiply-rotate lanes over 8-byte words.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fingerprint {
    a: u64,
    b: u64,
}

impl Default for Fingerprint {
    fn default() -> Self {
        Fingerprint {
            a: 0x243F_6A88_85A3_08D3,
            b: 0x1319_8A2E_0370_7344,
        }
    }
}

impl Fingerprint {
    /// A fresh fingerprint.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    fn word(&mut self, w: u64) {
        self.a = (self.a ^ w).wrapping_mul(K1).rotate_left(29);
        self.b = self.b.wrapping_add(w).wrapping_mul(K2).rotate_left(37) ^ self.a;
    }

    /// Adds one piece of bytes (length-framed).
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.word(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.word(u64::from_le_bytes(w));
        }
        self.word(bytes.len() as u64 ^ 0xA5A5_A5A5_0000_0000);
    }

    /// Adds a string piece.
    pub(crate) fn write_str(&mut self, s: &str) {
        self.write(s.as_bytes());
    }

    /// The 128-bit value.
    pub(crate) fn finish(&self) -> u128 {
        ((mix(self.a ^ self.b.rotate_left(17)) as u128) << 64) | mix(self.b ^ K1) as u128
    }
}

/// The fmix64 finaliser: every input bit affects every output bit.
fn mix(mut z: u64) -> u64 {
    z ^= z >> 33;
    z = z.wrapping_mul(0xff51_afd7_ed55_8ccd);
    z ^= z >> 33;
    z = z.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    z ^ (z >> 33)
}

/// The fingerprint of one piece.
pub(crate) fn of(bytes: &[u8]) -> u128 {
    let mut f = Fingerprint::new();
    f.write(bytes);
    f.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framing_and_sensitivity() {
        let two = |x: &str, y: &str| {
            let mut f = Fingerprint::new();
            f.write_str(x);
            f.write_str(y);
            f.finish()
        };
        assert_ne!(two("ab", "c"), two("a", "bc"));
        assert_eq!(two("ab", "c"), two("ab", "c"));
        assert_ne!(of(b""), of(b"\0"));
        assert_ne!(of(b"12345678"), of(b"12345679"));
        assert_ne!(of(b"123456789"), of(b"123456788"));
        let long = vec![7u8; 1000];
        let mut other = long.clone();
        other[999] = 8;
        assert_ne!(of(&long), of(&other));
    }
}
