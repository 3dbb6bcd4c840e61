//! A tape of one handshake era serving a client of the other.
//!
//! - A tape recorded with a legacy-only client holds `initialize` and no
//!   `server/discover`: the probe a 2026-07-28 client sends first is refused the way a
//!   legacy server refuses it (-32601), so a dual-era client falls back to `initialize`
//!   and is answered from the tape.
//! - A tape recorded with a 2026-07-28 client holds `server/discover` and no
//!   `initialize`: a legacy client's `initialize` is answered from the recorded discover
//!   result (its capabilities, instructions and server info), with a protocol version
//!   the recorded server offered (the client's own when offered, else the newest
//!   offered version older than 2026-07-28, else — a dual-era server lists only the
//!   stateless revision there — the client's own legacy version). Its later calls then
//!   match the recorded ones as usual (the normaliser leaves out the era's per-request
//!   `_meta`).
//! - When no bridge fits (the recorded discover was refused or cannot be read), the
//!   miss says which handshake the tape holds and which the client used.

use std::io::Write;

use reel_mcp::jsonrpc::methods;
use serde_json::{Map, Value, json};

use super::input::Incoming;
use super::out::{ClientOut, Dest};
use super::server::Server;
use crate::splice;

/// The first stateless revision: versions before it have the `initialize` handshake.
const STATELESS: &str = "2026-07-28";
/// Where a 2026-07-28 result names the server.
const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// The `initialize` result built from a recorded `server/discover` result, for a client
/// that asked for `requested`; `Err` with why no bridge fits.
pub(crate) fn initialize_from_discover(
    discover: &Value,
    requested: Option<&str>,
) -> Result<Value, String> {
    let result = discover
        .get("result")
        .ok_or("the recorded server/discover was not answered with a result")?;
    let offered: Vec<&str> = result
        .get("supportedVersions")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // The client's version when the server offered it; else the newest legacy version
    // it offered; else (dual-era servers list only the stateless revision in their
    // discover result, though they answer initialize) the client's own legacy version.
    let newest_legacy = offered.iter().copied().filter(|v| *v < STATELESS).max();
    let version = match requested {
        Some(r) if offered.contains(&r) && r < STATELESS => r,
        _ => match (newest_legacy, requested) {
            (Some(v), _) => v,
            (None, Some(r)) if r < STATELESS => r,
            _ => {
                return Err(format!(
                    "the client asked for no version before 2026-07-28 and the recorded \
                     server offered none (supportedVersions {offered:?})"
                ));
            }
        },
    };
    let mut out = Map::new();
    out.insert("protocolVersion".into(), version.into());
    out.insert(
        "capabilities".into(),
        result
            .get("capabilities")
            .cloned()
            .unwrap_or_else(|| json!({})),
    );
    let info = result
        .pointer(&format!("/_meta/{}", SERVER_INFO.replace('/', "~1")))
        .cloned()
        .unwrap_or_else(|| json!({"name": "reel-tape", "version": "0"}));
    out.insert("serverInfo".into(), info);
    if let Some(i) = result.get("instructions") {
        out.insert("instructions".into(), i.clone());
    }
    Ok(Value::Object(out))
}

impl<C: ClientOut, D: Write> Server<C, D> {
    /// Answers a handshake the tape does not hold from the one it holds; false when
    /// neither applies (the request is then a miss, see [`Server::handshake_miss`]).
    pub(super) fn bridge_handshake(&mut self, inc: &Incoming) -> bool {
        let tape = &self.src.tape;
        if inc.method == methods::SERVER_DISCOVER
            && !tape.has_method(methods::SERVER_DISCOVER)
            && tape.has_method(methods::INITIALIZE)
        {
            let e =
                json!({"code": reel_mcp::drift::METHOD_NOT_FOUND, "message": "Method not found"});
            self.send_error(Dest::answer(inc.route), &inc.id_raw, &e);
            self.summary.generic += 1;
            return true;
        }
        if inc.method != methods::INITIALIZE || tape.has_method(methods::INITIALIZE) {
            return false;
        }
        let Ok((ex, result)) = self.discover_bridge(inc) else {
            return false;
        };
        // The recorded probe served this handshake: it is used, not left over.
        self.src.tape.consume(ex);
        let text = splice::response(&inc.id_raw, "result", &result.to_string());
        self.send(Dest::answer(inc.route), &text, "tape");
        self.summary.bridged += 1;
        true
    }

    /// The `initialize` result from the tape's first answered `server/discover`, and
    /// that exchange.
    fn discover_bridge(&mut self, inc: &Incoming) -> Result<(u32, Value), String> {
        let answered = self
            .src
            .tape
            .candidates(methods::SERVER_DISCOVER)
            .iter()
            .find_map(|&i| Some((i, self.src.tape.exchange(i).response?)));
        let (ex, at) = answered.ok_or("the tape holds no answered server/discover")?;
        let discover = self
            .with_raw(at.at, |raw| serde_json::from_str::<Value>(raw).ok())
            .flatten()
            .ok_or("the recorded server/discover answer cannot be read")?;
        initialize_from_discover(&discover, inc.protocol_version.as_deref()).map(|r| (ex, r))
    }

    /// Why a handshake request missed, naming both eras; `None` for other requests.
    pub(super) fn handshake_miss(&mut self, inc: &Incoming) -> Option<String> {
        let holds = |m| self.src.tape.has_method(m);
        let (has_init, has_discover) =
            (holds(methods::INITIALIZE), holds(methods::SERVER_DISCOVER));
        match inc.method.as_str() {
            methods::INITIALIZE if !has_init && has_discover => {
                let why = self.discover_bridge(inc).err().unwrap_or_default();
                Some(format!(
                    "the tape holds the 2026-07-28 handshake (server/discover), the client \
                     opened with the legacy initialize (protocol {}): {why}",
                    inc.protocol_version.as_deref().unwrap_or("not given")
                ))
            }
            methods::SERVER_DISCOVER if !has_discover && !has_init => {
                Some("the tape holds neither handshake (no server/discover, no initialize)".into())
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn discover(versions: &[&str]) -> Value {
        json!({"jsonrpc": "2.0", "id": 0, "result": {
            "supportedVersions": versions,
            "capabilities": {"tools": {"listChanged": true}},
            "instructions": "use it",
            "_meta": {SERVER_INFO: {"name": "demo", "version": "1.2"}},
        }})
    }

    #[test]
    fn initialize_is_answered_from_a_recorded_discover() {
        let d = discover(&["2026-07-28", "2025-11-25", "2025-06-18"]);
        let r = initialize_from_discover(&d, Some("2025-06-18")).unwrap();
        assert_eq!(
            r,
            json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {"listChanged": true}},
                   "serverInfo": {"name": "demo", "version": "1.2"}, "instructions": "use it"})
        );
        // A version the server did not offer: the newest legacy one it did.
        let r = initialize_from_discover(&d, Some("2024-11-05")).unwrap();
        assert_eq!(r["protocolVersion"], "2025-11-25");
    }

    #[test]
    fn a_dual_era_server_that_listed_only_the_stateless_revision_gets_the_clients() {
        let d = discover(&["2026-07-28"]);
        let r = initialize_from_discover(&d, Some("2025-11-25")).unwrap();
        assert_eq!(r["protocolVersion"], "2025-11-25");
        let e = initialize_from_discover(&d, Some("2026-07-28"));
        assert!(e.unwrap_err().contains("no version before 2026-07-28"));
        let refused = json!({"jsonrpc": "2.0", "id": 0, "error": {"code": -32601, "message": "x"}});
        assert!(initialize_from_discover(&refused, None).is_err());
    }
}
