//! The compiled rules, as the JSON walk and the text pass read them: the revision,
//! the key rule, the value rules, the path rules and `drop-media`. How they apply to
//! one string is `strings`; how they apply to a JSON text is `json`.

use super::builtin::Revision;
use super::names::{self, Strength};
use super::path::PathRules;
use super::text::ValueRules;

/// The compiled rules the walker and the text pass use.
#[derive(Debug)]
pub(crate) struct Compiled {
    pub(crate) revision: Revision,
    pub(crate) secret_keys: bool,
    pub(crate) values: ValueRules,
    pub(crate) paths: PathRules,
    pub(crate) drop_media: Option<usize>,
}

impl Compiled {
    pub(crate) fn is_identity(&self) -> bool {
        !self.secret_keys
            && self.values.is_empty()
            && self.paths.is_empty()
            && self.drop_media.is_none()
    }

    /// Whether `src` provably needs no change without walking it: no rule looks at
    /// keys or positions, and no value rule can match (`gate`: whether the prefilter
    /// matches somewhere in `src`, asked only when it decides).
    pub(crate) fn skips_whole(&self, src: &str, gate: impl FnOnce() -> bool) -> bool {
        if self.is_identity() {
            return true;
        }
        if self.secret_keys
            || !self.paths.is_empty()
            || self.drop_media.is_some()
            || self.values.has_ungated()
            || gate()
        {
            return false;
        }
        // An escape can spell anything; let the walker decode it.
        memchr::memchr(b'\\', src.as_bytes()).is_none()
    }

    /// How the key rule treats member `key` (`None` with the key rule off).
    pub(crate) fn key_strength(&self, key: &str) -> Option<Strength> {
        if !self.secret_keys {
            return None;
        }
        names::member(key, self.revision)
    }
}
