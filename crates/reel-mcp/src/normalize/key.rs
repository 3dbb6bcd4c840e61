//! Match keys: 128-bit hashes of a request's method and normalised params.
//!
//! One hashing scheme serves two producers that must agree bit for bit: [`MatchKey::of`]
//! on a normalised `serde_json::Value` (verify, diff, tests), and the streaming scanner
//! ([`super::scan`]) that keys a message straight from its text without building a
//! `Value` (replay's hot path). Every value hashes to a `u128` on its own:
//! - scalars: a tag, then the value (strings by their decoded bytes; numbers by the value
//!   they denote, integral ones as integers, so `1`, `1.0` and `1e0` agree);
//! - arrays: a tag, the element hashes in order, then the length;
//! - objects: a tag, the member count and the wrapping sum of the member hashes
//!   (`H(key, value hash)`), so member order never matters and nothing needs sorting.
//!
//! Two objects holding the same key twice (invalid JSON-RPC) may key differently on the
//! two paths; nothing else does.

use serde_json::Value;

/// What identifies a request for matching: its method and its params after
/// normalisation, hashed to 128 bits ([`KeyHasher`]: two independent 64-bit lanes, not
/// cryptographic, so keys of tapes and requests crafted to collide would collide).
/// Values equal under [`super::json_eq`] always have equal keys. Keys are only compared
/// within one process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MatchKey(pub u128);

impl MatchKey {
    /// The key of a normalised message (its `method` and `params`; absent ones as null).
    pub fn of(message: &Value) -> MatchKey {
        let method = hash_value(message.get("method").unwrap_or(&Value::Null));
        let params = hash_value(message.get("params").unwrap_or(&Value::Null));
        MatchKey::from_parts(method, params)
    }

    /// The key from the hashes of the method and the params.
    pub(super) fn from_parts(method: u128, params: u128) -> MatchKey {
        let mut h = KeyHasher::new();
        h.write_u64(9);
        h.write_u128(method);
        h.write_u128(params);
        MatchKey(h.finish128())
    }

    /// The key of any value (the same equivalence as [`super::json_eq`]).
    pub fn of_value(v: &Value) -> MatchKey {
        MatchKey(hash_value(v))
    }
}

/// A fast 128-bit hash for match keys: two 64-bit lanes, each folding one 8-byte word
/// at a time through a 64×64→128-bit multiply (the high and low halves xored, as in
/// wyhash/foldhash), with different multipliers and word rotations so the lanes are
/// independent, and the murmur3 finaliser at the end. Every `write` is framed by its
/// length, so concatenations cannot alias. `reel diff` uses it too, to fingerprint the
/// bytes it compares (equal fingerprints: the same bytes; unequal: compare exactly).
#[derive(Clone, Copy, Debug)]
pub struct KeyHasher {
    a: u64,
    b: u64,
}

impl Default for KeyHasher {
    fn default() -> Self {
        KeyHasher::new()
    }
}

const LANE_A: u64 = 0x9E37_79B9_7F4A_7C15;
const LANE_B: u64 = 0xC2B2_AE3D_27D4_EB4F;

fn fmix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

fn fold(x: u64, y: u64) -> u64 {
    let p = u128::from(x) * u128::from(y);
    (p as u64) ^ ((p >> 64) as u64)
}

impl KeyHasher {
    /// A fresh hasher.
    pub fn new() -> KeyHasher {
        KeyHasher {
            a: 0x243F_6A88_85A3_08D3,
            b: 0x1319_8A2E_0370_7344,
        }
    }

    fn word(&mut self, w: u64) {
        self.a = fold(self.a ^ w, LANE_A);
        self.b = fold(self.b ^ w.rotate_left(32), LANE_B);
    }

    /// Feeds bytes (framed by their length).
    pub fn write(&mut self, bytes: &[u8]) {
        self.word(bytes.len() as u64);
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
    }

    /// The hash of one piece of bytes.
    pub fn of(bytes: &[u8]) -> u128 {
        let mut h = KeyHasher::new();
        h.write(bytes);
        h.finish128()
    }

    /// Feeds one tag or number.
    pub fn write_u64(&mut self, v: u64) {
        self.word(v);
    }

    /// Feeds a 128-bit value (a nested hash).
    pub fn write_u128(&mut self, v: u128) {
        self.word(v as u64);
        self.word((v >> 64) as u64);
    }

    /// The 128-bit value.
    pub fn finish128(&self) -> u128 {
        ((fmix(self.a ^ LANE_B) as u128) << 64) | fmix(self.b ^ LANE_A) as u128
    }
}

const NULL: u64 = 0;
const FALSE: u64 = 1;
const TRUE: u64 = 2;
const INTEGER: u64 = 3;
const FLOAT: u64 = 4;
const STRING: u64 = 5;
const ARRAY: u64 = 6;
const OBJECT: u64 = 7;
const MEMBER: u64 = 8;

fn tagged(tag: u64) -> KeyHasher {
    let mut h = KeyHasher::new();
    h.write_u64(tag);
    h
}

/// `null`.
pub(super) fn h_null() -> u128 {
    tagged(NULL).finish128()
}

/// `true` / `false`.
pub(super) fn h_bool(b: bool) -> u128 {
    tagged(if b { TRUE } else { FALSE }).finish128()
}

/// An integer.
pub(super) fn h_integer(i: i128) -> u128 {
    let mut h = tagged(INTEGER);
    h.write_u128(i as u128);
    h.finish128()
}

/// A float: integral values (below 10^38) as integers, so they meet their integer
/// spelling.
pub(super) fn h_float(f: f64) -> u128 {
    if f.fract() == 0.0 && f.abs() < 1.0e38 {
        return h_integer(f as i128);
    }
    let mut h = tagged(FLOAT);
    h.write_u64(f.to_bits());
    h.finish128()
}

/// A string, by its decoded bytes.
pub(super) fn h_str(s: &str) -> u128 {
    let mut h = tagged(STRING);
    h.write(s.as_bytes());
    h.finish128()
}

/// One object member.
pub(super) fn h_member(key: &str, value: u128) -> u128 {
    let mut h = tagged(MEMBER);
    h.write(key.as_bytes());
    h.write_u128(value);
    h.finish128()
}

/// An object from its member count and the wrapping sum of its member hashes.
pub(super) fn h_object(count: u64, sum: u128) -> u128 {
    let mut h = tagged(OBJECT);
    h.write_u64(count);
    h.write_u128(sum);
    h.finish128()
}

/// Hashes an array element by element.
pub(super) struct ArrayHash {
    h: KeyHasher,
    len: u64,
}

impl ArrayHash {
    pub(super) fn new() -> ArrayHash {
        ArrayHash {
            h: tagged(ARRAY),
            len: 0,
        }
    }

    pub(super) fn push(&mut self, element: u128) {
        self.h.write_u128(element);
        self.len += 1;
    }

    pub(super) fn finish(mut self) -> u128 {
        self.h.write_u64(self.len);
        self.h.finish128()
    }
}

/// Hashes a value under [`super::json_eq`]'s equivalence.
pub(super) fn hash_value(v: &Value) -> u128 {
    match v {
        Value::Null => h_null(),
        Value::Bool(b) => h_bool(*b),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                h_integer(i128::from(i))
            } else if let Some(u) = n.as_u64() {
                h_integer(i128::from(u))
            } else {
                h_float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        // As the scan of the text hashes the number a marker stands for.
        Value::String(s) => match super::numbers::marked(s) {
            Some(n) => h_float(super::numbers::marked_f64(n)),
            None => h_str(s),
        },
        Value::Array(a) => {
            let mut h = ArrayHash::new();
            for e in a {
                h.push(hash_value(e));
            }
            h.finish()
        }
        Value::Object(o) => {
            let sum = o.iter().fold(0u128, |acc, (k, v)| {
                acc.wrapping_add(h_member(k, hash_value(v)))
            });
            h_object(o.len() as u64, sum)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::KeyHasher;

    #[test]
    fn pieces_are_framed_and_every_byte_counts() {
        let two = |x: &[u8], y: &[u8]| {
            let mut h = KeyHasher::new();
            h.write(x);
            h.write(y);
            h.finish128()
        };
        assert_ne!(two(b"ab", b"c"), two(b"a", b"bc"));
        assert_eq!(two(b"ab", b"c"), two(b"ab", b"c"));
        assert_ne!(KeyHasher::of(b""), KeyHasher::of(b"\0"));
        assert_ne!(KeyHasher::of(b"12345678"), KeyHasher::of(b"12345679"));
        assert_ne!(KeyHasher::of(b"123456789"), KeyHasher::of(b"123456788"));
        let long = vec![7u8; 1000];
        let mut other = long.clone();
        other[999] = 8;
        assert_ne!(KeyHasher::of(&long), KeyHasher::of(&other));
    }
}
