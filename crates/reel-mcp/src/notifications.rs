//! When a difference in how many notifications of a method two runs saw is drift.
//!
//! `reel verify` (a recording against a live run) and `reel diff` (two runs) both count
//! notifications per method, and both must call the same differences drift, or a run
//! that verifies clean diffs as drifted against its own recording. The rule lives here,
//! once, and both commands ask it ([`NotificationCheck::judge`]) and print its words
//! ([`NotificationCheck::HELP`], [`TIMING_NOTE`]).
//!
//! Why `notifications/*/list_changed` counts are reported but not drift by default: how
//! many of them a run sees depends on timing, not on what the server does. Over
//! Streamable HTTP a server sends an unsolicited notification on the client's GET
//! stream, and drops it when that stream is not open yet; `server-everything` registers
//! five tools right after `notifications/initialized` and announces each, so a client
//! whose GET stream opened a moment earlier sees five `tools/list_changed`, and one
//! whose stream opened later sees none — from one honest run to the next.

/// How notification counts are compared (`--notifications` of `reel verify` and
/// `reel diff`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NotificationCheck {
    /// Counts per method must be equal, except for `notifications/*/list_changed`,
    /// whose count differences are reported only (the default).
    #[default]
    Count,
    /// Counts per method must be equal, `list_changed` included.
    Strict,
    /// Not compared.
    Ignore,
}

/// What a difference in one method's count is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CountVerdict {
    /// The counts are equal, or not compared at all (`ignore`).
    Same,
    /// Different, but the count depends on timing: reported, not drift.
    Timing,
    /// Different: drift.
    Drift,
}

/// Why a timing-dependent count difference is not drift, said the same way by every
/// command that reports one.
pub const TIMING_NOTE: &str =
    "not drift, a list_changed count depends on timing (--notifications strict compares it)";

impl NotificationCheck {
    /// The flag's values, in the order `--help` lists them.
    pub const VALUES: [(&'static str, NotificationCheck); 3] = [
        ("count", NotificationCheck::Count),
        ("strict", NotificationCheck::Strict),
        ("ignore", NotificationCheck::Ignore),
    ];

    /// The flag's help, for every command that has it.
    pub const HELP: &'static str = "How notification counts are compared: `count` (per method and \
direction; a notifications/*/list_changed count is reported but is not drift, since it depends on \
timing), `strict` (per method, list_changed too) or `ignore` (not at all).";

    /// Whether counts of `method` are compared at all (their difference can be drift).
    pub fn compares(self, method: &str) -> bool {
        match self {
            NotificationCheck::Strict => true,
            NotificationCheck::Count => !timing_dependent(method),
            NotificationCheck::Ignore => false,
        }
    }

    /// What it means that `method` came `a` times in one run and `b` times in the other.
    pub fn judge(self, method: &str, a: u64, b: u64) -> CountVerdict {
        if a == b || self == NotificationCheck::Ignore {
            CountVerdict::Same
        } else if self.compares(method) {
            CountVerdict::Drift
        } else {
            CountVerdict::Timing
        }
    }

    /// The flag value: `count`, `strict` or `ignore`.
    pub fn as_str(self) -> &'static str {
        match self {
            NotificationCheck::Count => "count",
            NotificationCheck::Strict => "strict",
            NotificationCheck::Ignore => "ignore",
        }
    }
}

/// A notification whose count depends on when the client's streams opened rather than
/// on the server's behaviour.
fn timing_dependent(method: &str) -> bool {
    method.starts_with("notifications/") && method.ends_with("/list_changed")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_changed_counts_are_timing_unless_strict() {
        let m = "notifications/tools/list_changed";
        assert_eq!(
            NotificationCheck::Count.judge(m, 0, 5),
            CountVerdict::Timing
        );
        assert_eq!(
            NotificationCheck::Strict.judge(m, 0, 5),
            CountVerdict::Drift
        );
        assert_eq!(NotificationCheck::Ignore.judge(m, 0, 5), CountVerdict::Same);
        assert_eq!(NotificationCheck::Count.judge(m, 5, 5), CountVerdict::Same);
        for list in ["prompts", "resources", "roots"] {
            let m = format!("notifications/{list}/list_changed");
            assert_eq!(
                NotificationCheck::Count.judge(&m, 1, 0),
                CountVerdict::Timing
            );
        }
    }

    #[test]
    fn other_counts_are_drift_unless_ignored() {
        let m = "notifications/message";
        assert_eq!(NotificationCheck::Count.judge(m, 1, 2), CountVerdict::Drift);
        assert_eq!(
            NotificationCheck::Strict.judge(m, 1, 2),
            CountVerdict::Drift
        );
        assert_eq!(NotificationCheck::Ignore.judge(m, 1, 2), CountVerdict::Same);
        assert_eq!(NotificationCheck::Count.judge(m, 2, 2), CountVerdict::Same);
        // Only notifications end that way; a request named so is no announcement.
        assert!(NotificationCheck::Count.compares("x/list_changed"));
    }

    #[test]
    fn flag_values_round_trip() {
        for (name, check) in NotificationCheck::VALUES {
            assert_eq!(check.as_str(), name);
        }
    }
}
