//! The key of a keyed seal: read from a file the user keeps away from the traces,
//! known to a seal only by its id, never written anywhere.

use std::io;
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

/// A secret key for keyed seals (HMAC-SHA-256).
#[derive(Clone)]
pub struct SealKey {
    pub(super) bytes: Vec<u8>,
}

impl std::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SealKey({})", self.id())
    }
}

/// Why a key cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The key file cannot be read.
    #[error("cannot read the key file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The key is too short to be a secret.
    #[error(
        "the key in {} has {len} bytes; a seal key needs at least {min} (make one with `head -c 32 /dev/urandom > KEYFILE`)",
        path.display(),
        min = SealKey::MIN_LEN
    )]
    TooShort {
        /// The file.
        path: PathBuf,
        /// Its length, without a final line break.
        len: usize,
    },
}

impl SealKey {
    /// The shortest key accepted, in bytes.
    pub const MIN_LEN: usize = 16;

    /// A key of these bytes, if it is long enough.
    pub fn new(bytes: Vec<u8>) -> Option<SealKey> {
        (bytes.len() >= Self::MIN_LEN).then_some(SealKey { bytes })
    }

    /// Reads a key file: its bytes, without one final line break (`\n` or `\r\n`), so a
    /// key written by `echo` or an editor is the same key as the one without.
    pub fn read(path: &Path) -> Result<SealKey, KeyError> {
        let mut bytes = std::fs::read(path).map_err(|source| KeyError::Read {
            path: path.to_owned(),
            source,
        })?;
        if bytes.ends_with(b"\n") {
            bytes.pop();
            if bytes.ends_with(b"\r") {
                bytes.pop();
            }
        }
        let len = bytes.len();
        SealKey::new(bytes).ok_or_else(|| KeyError::TooShort {
            path: path.to_owned(),
            len,
        })
    }

    /// The key's id, written to a keyed seal's head so a verifier can tell "another key"
    /// from "an edited seal": 16 hex digits of SHA-256 over a label and the key. It
    /// tells nothing a keyed chain does not already (both allow guessing a weak key).
    pub fn id(&self) -> String {
        let mut h = Sha256::new();
        h.update(b"reel.seal/1 key id\n");
        h.update(&self.bytes);
        hex::encode(&h.finalize()[..8])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_files_lose_one_final_line_break_and_must_be_long_enough() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::fs::write(&a, "0123456789abcdef-key\n").unwrap();
        std::fs::write(&b, "0123456789abcdef-key").unwrap();
        assert_eq!(
            SealKey::read(&a).unwrap().id(),
            SealKey::read(&b).unwrap().id()
        );
        std::fs::write(&a, "short\n").unwrap();
        assert!(matches!(
            SealKey::read(&a),
            Err(KeyError::TooShort { len: 5, .. })
        ));
        assert!(matches!(
            SealKey::read(&dir.path().join("none")),
            Err(KeyError::Read { .. })
        ));
    }
}
