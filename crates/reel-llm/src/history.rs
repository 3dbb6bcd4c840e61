//! Which leading messages of a request are already on the tape, so they can be elided
//! with a `history_elided` marker (format.md, "The `history_elided` block").
//!
//! Conversations are told apart by content, not by connection: a request continues the
//! conversation whose recorded message list is the longest prefix of its own, within
//! the same scope (endpoint and system prompt). Each recorded request adds the rolling
//! hash of its whole message list. Two agents sharing one proxy therefore never elide
//! each other's messages: their prefixes hash differently unless they are the same
//! messages, and then what the marker stands for is on the tape either way. The last
//! message of a request is never elided, so every request leaves at least one turn to
//! carry the marker (a retried request shows its last message again).
//!
//! Each conversation gets a number, in order of first appearance (its turns carry it as
//! `conversation`, so `reel diff` pairs the turns of one conversation with those of the
//! same conversation in another run).

use std::collections::HashMap;
use std::sync::Mutex;

/// The recorded prefixes, by scope.
#[derive(Debug, Default)]
pub struct History {
    seen: Mutex<Seen>,
}

#[derive(Debug, Default)]
struct Seen {
    /// Recorded message lists, by scope and digest: their conversation.
    lists: HashMap<(String, String), u64>,
    conversations: u64,
}

impl History {
    /// A history with nothing recorded.
    pub fn new() -> History {
        History::default()
    }

    /// How many leading messages of a request with these prefix digests (`prefixes[k]`
    /// covers the first `k` messages) are on the tape already, at most all but the
    /// last, and the conversation the request belongs to; records the whole list as
    /// seen.
    pub fn elide(&self, scope: &str, prefixes: &[String]) -> (usize, u64) {
        let n = prefixes.len().saturating_sub(1);
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        // A repeat of a recorded request keeps only its last message.
        let found = (1..=n).rev().find_map(|k| {
            let conv = *seen.lists.get(&(scope.to_owned(), prefixes[k].clone()))?;
            Some((k.min(n - 1), conv))
        });
        let (count, conv) = match found {
            Some(f) => f,
            None => {
                seen.conversations += 1;
                (0, seen.conversations)
            }
        };
        if n > 0 {
            seen.lists
                .insert((scope.to_owned(), prefixes[n].clone()), conv);
        }
        (count, conv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(ids: &[&str]) -> Vec<String> {
        std::iter::once("0".to_owned())
            .chain(ids.iter().map(|s| (*s).to_owned()))
            .collect()
    }

    #[test]
    fn the_longest_recorded_prefix_is_elided_and_the_last_message_never() {
        let h = History::new();
        assert_eq!(h.elide("s", &p(&["a"])), (0, 1));
        assert_eq!(h.elide("s", &p(&["a", "ab", "abc"])), (1, 1));
        assert_eq!(
            h.elide("s", &p(&["a", "ab", "abc", "abcd", "abcde"])),
            (3, 1)
        );
        // A retry of the same request keeps its last message.
        assert_eq!(
            h.elide("s", &p(&["a", "ab", "abc", "abcd", "abcde"])),
            (4, 1)
        );
    }

    #[test]
    fn other_scopes_and_other_conversations_do_not_elide() {
        let h = History::new();
        h.elide("s", &p(&["a"]));
        assert_eq!(h.elide("t", &p(&["a", "ab"])), (0, 2));
        assert_eq!(h.elide("s", &p(&["x", "xy"])), (0, 3));
    }
}
