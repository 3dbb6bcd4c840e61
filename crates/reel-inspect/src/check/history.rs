//! `history_elided` verification. A marker says that the first `count` messages of a
//! request hash to `sha256`; it can be checked only against that request's body, which
//! a trace holds when an `llm.request` or `llm.exchange` event carries it. Markers and
//! bodies come in either order, so each side waits for the other, both capped:
//! [`MAX_REQUEST_BODIES`] bodies (the oldest forgotten first) and
//! [`MAX_PENDING_MARKERS`] markers. A marker whose body never comes is unverifiable
//! (info), never wrong.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::checker::Checker;
use super::members::snippet;
use super::options::{MAX_PENDING_MARKERS, MAX_REQUEST_BODIES};
use super::rules::Rule;
use super::state::{Loc, Marker, StoredBody};
use reel_trace::hash::{RequestDigests, Verdict};

impl Checker {
    /// Keeps the prefix digests of a request body an `llm.*` event carries, and settles
    /// the markers that were waiting for it.
    pub(super) fn request_body(&mut self, loc: Loc, raw: &str) {
        #[derive(Deserialize)]
        struct Exchange<'a> {
            #[serde(borrow, default)]
            request_sha256: Option<Cow<'a, str>>,
            #[serde(borrow, default)]
            body: Option<&'a RawValue>,
        }
        let Ok(Exchange {
            request_sha256: Some(sha),
            body: Some(body),
        }) = serde_json::from_str::<Exchange<'_>>(raw)
        else {
            return;
        };
        let text = body.get();
        let stored = match text.as_bytes().first() {
            Some(b'"') => match serde_json::from_str::<String>(text) {
                Ok(exact) => StoredBody {
                    loc,
                    exact: true,
                    digests: RequestDigests::from_body(exact.as_bytes()),
                },
                Err(_) => return,
            },
            Some(b'{') => StoredBody {
                loc,
                exact: false,
                digests: RequestDigests::from_body(text.as_bytes()),
            },
            _ => return,
        };
        let key = sha.to_ascii_lowercase();
        if let Some(waiting) = self.markers.remove(&key) {
            self.pending_markers -= waiting.len();
            for marker in waiting {
                self.settle(&marker, &stored);
            }
        }
        if self.bodies.len() >= MAX_REQUEST_BODIES {
            if let Some(oldest) = self.body_order.pop_front() {
                self.bodies.remove(&oldest);
            }
        }
        if self.bodies.insert(key.clone(), stored).is_none() {
            self.body_order.push_back(key);
        }
    }

    pub(super) fn history_elided(
        &mut self,
        loc: Loc,
        count: u64,
        sha256: &str,
        request: Option<&str>,
    ) {
        let Some(request) = request else {
            self.tally(loc, Rule::HistoryElidedUnverifiable, "no request_sha256");
            return;
        };
        let marker = Marker {
            loc,
            count,
            sha256: sha256.to_owned(),
            request_sha256: request.to_ascii_lowercase(),
        };
        if let Some(body) = self.bodies.remove(&marker.request_sha256) {
            self.settle(&marker, &body);
            self.bodies.insert(marker.request_sha256, body);
        } else if self.pending_markers < MAX_PENDING_MARKERS {
            self.pending_markers += 1;
            self.markers
                .entry(marker.request_sha256.clone())
                .or_default()
                .push(marker);
        } else {
            self.tally(
                loc,
                Rule::HistoryElidedUnverifiable,
                "body not in the trace",
            );
        }
    }

    fn settle(&mut self, marker: &Marker, body: &StoredBody) {
        let at = self.place(body.loc);
        let digests = match &body.digests {
            Ok(d) => d,
            Err(e) => {
                self.report(
                    Some(marker.loc),
                    Rule::HistoryElidedUnverifiable,
                    format!(
                        "history_elided cannot be verified: the request body at {at} is not \
                         a request with a messages array ({e})"
                    ),
                );
                return;
            }
        };
        let request = body.exact.then_some(marker.request_sha256.as_str());
        match digests.verify(marker.count, &marker.sha256, request) {
            Verdict::Verified => {}
            Verdict::Mismatch { recorded, computed } => self.report(
                Some(marker.loc),
                Rule::HistoryElidedMismatch,
                format!(
                    "history_elided.sha256 is {} but the first {} messages of the request \
                     body at {at} hash to {computed}: the marker does not describe what was \
                     sent",
                    snippet(&recorded),
                    marker.count
                ),
            ),
            Verdict::TooFewMessages { count, available } => self.report(
                Some(marker.loc),
                Rule::HistoryElidedMismatch,
                format!(
                    "history_elided.count is {count} but the request body at {at} has only \
                     {available} messages"
                ),
            ),
            Verdict::RequestMismatch { recorded, computed } => self.report(
                Some(marker.loc),
                Rule::HistoryElidedRequestMismatch,
                format!(
                    "the request body at {at} hashes to {computed}, not to request_sha256 {}: \
                     it was redacted or re-encoded (the elided prefix does match)",
                    snippet(&recorded)
                ),
            ),
            Verdict::Unverifiable { reason } => self.report(
                Some(marker.loc),
                Rule::HistoryElidedUnverifiable,
                format!("history_elided cannot be verified: {reason}"),
            ),
        }
    }

    /// At the end of the trace: the markers still waiting never met their body.
    pub(super) fn markers_never_settled(&mut self) {
        let waiting: Vec<Marker> = self.markers.drain().flat_map(|(_, m)| m).collect();
        for marker in waiting {
            self.tally(
                marker.loc,
                Rule::HistoryElidedUnverifiable,
                "body not in the trace",
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::check::Rule;
    use crate::check::testing::{T, check, rules, trace};

    #[test]
    fn history_elided_is_verified_against_a_body_in_the_trace() {
        let body = r#"{"model":"claude-example-1","max_tokens":64,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"hello"}]},{"role":"user","content":"again"}]}"#;
        let req = reel_trace::hash::request_sha256(body.as_bytes());
        let good = "06b6136d214f5714bd5894f383a5fd9b13a0750810e13d8f177b5e8607472dae";
        let event = format!(
            r#"{{"t":"{T}","dir":"event","kind":"llm.request","raw":{{"request_sha256":"{req}","body":{}}}}}"#,
            serde_json::to_string(body).unwrap()
        );
        let turn = |sha: &str| {
            format!(
                r#"{{"t":"{T}","type":"turn","role":"user","blocks":[{{"type":"history_elided","count":2,"sha256":"{sha}","request_sha256":"{req}"}}]}}"#
            )
        };
        // Marker before and after its body; a wrong one after.
        let r = check(&trace(&[
            &turn(good),
            &event,
            &turn(good),
            &turn(&"0".repeat(64)),
        ]));
        assert_eq!(rules(&r), vec![(Rule::HistoryElidedMismatch, Some(5))]);
        // Without the body, nothing can be verified: info only.
        let r = check(&trace(&[&turn(good), &turn(&"0".repeat(64))]));
        assert_eq!(rules(&r), vec![(Rule::HistoryElidedUnverifiable, Some(2))]);
        assert_eq!(r.problems[0].count, Some(2));
        assert_eq!(r.errors, 0);
    }

    #[test]
    fn a_history_elided_hash_is_64_lowercase_hex() {
        let turn = |sha: &str| {
            format!(
                r#"{{"t":"{T}","type":"turn","role":"user","blocks":[{{"type":"history_elided","count":1,"sha256":"{sha}"}}]}}"#
            )
        };
        let r = check(&trace(&[&turn(&"A".repeat(64)), &turn("abc")]));
        let found: Vec<_> = rules(&r)
            .into_iter()
            .filter(|(rule, _)| *rule == Rule::BlockIncomplete)
            .collect();
        assert_eq!(
            found,
            vec![
                (Rule::BlockIncomplete, Some(2)),
                (Rule::BlockIncomplete, Some(3))
            ]
        );
    }
}
