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

/// One recorded request as [`rebuild`] reads it: its scope (endpoint), its
/// conversation (0: not known), how many leading messages it elided, and the messages
/// it kept (matchable form).
pub struct Kept<'a> {
    /// The endpoint (requests pair within one).
    pub scope: &'a str,
    /// The conversation its turns carry (0: not known).
    pub conversation: u64,
    /// `history_elided.count`, when it elided.
    pub elided: Option<usize>,
    /// The messages (or Responses input items) it kept.
    pub messages: Option<&'a [serde_json::Value]>,
}

/// The whole message list of each recorded request, rebuilt from the tape for replay:
/// a request that elided `count` messages continues the latest earlier request of its
/// scope (and conversation, when known) whose whole list is `count` long (the recorder
/// elides exactly an earlier request's list), so its list is that one followed by the
/// messages it kept. `None` where that earlier request is not on the tape.
///
/// Replay compares a live request with this whole list, so `--ignore` pointers and the
/// volatile members apply in the request's own index space, across the elided part too
/// (a per-run id in an elided message no longer makes the digest differ).
pub fn rebuild(kept: &[Kept<'_>]) -> Vec<Option<Vec<serde_json::Value>>> {
    let mut whole: Vec<Option<Vec<serde_json::Value>>> = Vec::with_capacity(kept.len());
    for (i, k) in kept.iter().enumerate() {
        let own = k.messages.map(<[serde_json::Value]>::to_vec);
        let list = match (k.elided, own) {
            (None, own) => own,
            (Some(_), None) => None,
            (Some(count), Some(own)) => (0..i).rev().find_map(|j| {
                let earlier = &kept[j];
                let same = earlier.scope == k.scope
                    && (k.conversation == 0
                        || earlier.conversation == 0
                        || earlier.conversation == k.conversation);
                let list = whole[j].as_ref().filter(|l| same && l.len() == count)?;
                let mut full = list.clone();
                full.extend(own.iter().cloned());
                Some(full)
            }),
        };
        whole.push(list);
    }
    whole
}

#[cfg(test)]
mod rebuild_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_elided_request_continues_the_earlier_list_of_its_length() {
        let a = [json!("q1")];
        let b = [json!("a1"), json!("q2")];
        let c = [json!("a2"), json!("q3")];
        let other = [json!("x")];
        let kept = [
            Kept {
                scope: "/r",
                conversation: 1,
                elided: None,
                messages: Some(&a),
            },
            Kept {
                scope: "/r",
                conversation: 2,
                elided: None,
                messages: Some(&other),
            },
            Kept {
                scope: "/r",
                conversation: 1,
                elided: Some(1),
                messages: Some(&b),
            },
            Kept {
                scope: "/r",
                conversation: 1,
                elided: Some(3),
                messages: Some(&c),
            },
            Kept {
                scope: "/r",
                conversation: 1,
                elided: Some(9),
                messages: Some(&c),
            },
        ];
        let w = rebuild(&kept);
        assert_eq!(
            w[2].as_deref(),
            Some(&[json!("q1"), json!("a1"), json!("q2")][..])
        );
        assert_eq!(w[3].as_ref().map(Vec::len), Some(5));
        assert_eq!(w[3].as_ref().unwrap()[4], json!("q3"));
        assert_eq!(w[4], None, "no earlier list of that length");
    }
}
