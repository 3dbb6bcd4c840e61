//! The LLM provider APIs as a trace records them: which endpoint a request path is and
//! which provider speaks it. The recorder routes and assembles turns by it (`reel-llm`),
//! and readers of a recording (the OTLP export) name the provider and the operation of a
//! recorded call by it, from the `endpoint` the trace keeps.

/// The provider whose wire format an endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// Anthropic Messages.
    Anthropic,
    /// OpenAI (and OpenAI-compatible servers: vLLM, Ollama's `/v1`, OpenRouter).
    OpenAi,
    /// Ollama's own API (`/api/chat`, NDJSON streams).
    Ollama,
}

impl Provider {
    /// The name used in traces and messages.
    pub fn name(self) -> &'static str {
        match self {
            Provider::Anthropic => "anthropic",
            Provider::OpenAi => "openai",
            Provider::Ollama => "ollama",
        }
    }
}

/// What an endpoint is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// `POST /v1/messages` (Anthropic).
    Messages,
    /// `POST /v1/chat/completions` (OpenAI).
    ChatCompletions,
    /// `POST /v1/responses` (OpenAI).
    Responses,
    /// `POST /api/chat` (Ollama).
    OllamaChat,
    /// A recognised endpoint that generates nothing reel assembles into turns
    /// (`count_tokens`, `models`, `embeddings`, legacy `completions`): a compact
    /// `llm.exchange`.
    NonGeneration,
    /// Anything else: a tolerant `llm.exchange` with the response body.
    Other,
}

/// Paths reel recognises, with their endpoint and provider.
const KNOWN: &[(&str, Endpoint, Provider)] = &[
    ("/v1/messages", Endpoint::Messages, Provider::Anthropic),
    (
        "/v1/messages/count_tokens",
        Endpoint::NonGeneration,
        Provider::Anthropic,
    ),
    (
        "/v1/chat/completions",
        Endpoint::ChatCompletions,
        Provider::OpenAi,
    ),
    ("/v1/responses", Endpoint::Responses, Provider::OpenAi),
    ("/v1/completions", Endpoint::NonGeneration, Provider::OpenAi),
    ("/v1/embeddings", Endpoint::NonGeneration, Provider::OpenAi),
    ("/v1/models", Endpoint::NonGeneration, Provider::OpenAi),
    ("/api/chat", Endpoint::OllamaChat, Provider::Ollama),
];

/// The provider's own path for `path` (no query): a known endpoint posted without its
/// `/v1` (`/messages`, `/chat/completions`: clients such as the Vercel AI SDK take a base
/// URL that includes `/v1` and append the rest) is the `/v1` one. Routing, the trace's
/// `endpoint` and replay's matching all use this form, so one exchange has one name
/// whichever way a client spelled it. Other paths are returned as they are.
pub fn canonical_path(path: &str) -> std::borrow::Cow<'_, str> {
    let trimmed = path.trim_end_matches('/');
    let versioned = KNOWN.iter().find_map(|(p, _, _)| {
        let rest = p.strip_prefix("/v1")?;
        (rest == trimmed).then_some(*p)
    });
    match versioned {
        Some(p) => std::borrow::Cow::Borrowed(p),
        None => std::borrow::Cow::Borrowed(path),
    }
}

impl Endpoint {
    /// The endpoint of `path` (no query, map prefix stripped) and the provider whose
    /// format it speaks. A request carrying `anthropic-version` is Anthropic's whatever
    /// its path (both providers serve `/v1/models`); other unknown paths are OpenAI's.
    pub fn of(path: &str, anthropic_header: bool) -> (Endpoint, Provider) {
        let canonical = canonical_path(path);
        let path = canonical.trim_end_matches('/');
        let known = KNOWN.iter().find(|(p, _, _)| *p == path);
        let endpoint = known.map_or(Endpoint::Other, |k| k.1);
        let provider = if anthropic_header {
            Provider::Anthropic
        } else {
            known.map_or(Provider::OpenAi, |k| k.2)
        };
        (endpoint, provider)
    }

    /// The endpoint of an exchange whose path reel does not know, read from its request
    /// body's shape: a POST of a JSON object with a `model` and `messages` is Anthropic
    /// Messages when the request carries `anthropic-version` (every Anthropic client
    /// sends it), else a chat completion; one with a `model` and `input` (no
    /// `messages`) is a Responses request. A gateway that serves a provider's API under
    /// a path of its own (`/openai/deployments/x/chat/completions`) is recorded with turns
    /// so. `None`: no generation shape, the exchange stays an `llm.exchange`.
    pub fn of_body(body: &[u8], anthropic_header: bool) -> Option<(Endpoint, Provider)> {
        #[derive(serde::Deserialize)]
        struct Shape<'a> {
            #[serde(default, borrow)]
            model: Option<&'a serde_json::value::RawValue>,
            #[serde(default, borrow)]
            messages: Option<&'a serde_json::value::RawValue>,
            #[serde(default, borrow)]
            input: Option<&'a serde_json::value::RawValue>,
        }
        let shape: Shape<'_> = serde_json::from_slice(body).ok()?;
        let is_array = |v: &serde_json::value::RawValue| v.get().trim_start().starts_with('[');
        shape.model?;
        match (shape.messages, shape.input) {
            (Some(m), _) if is_array(m) => Some(if anthropic_header {
                (Endpoint::Messages, Provider::Anthropic)
            } else {
                (Endpoint::ChatCompletions, Provider::OpenAi)
            }),
            (None, Some(_)) if !anthropic_header => Some((Endpoint::Responses, Provider::OpenAi)),
            _ => None,
        }
    }

    /// True for the endpoints whose exchanges become turn records.
    pub fn generates(self) -> bool {
        matches!(
            self,
            Endpoint::Messages
                | Endpoint::ChatCompletions
                | Endpoint::Responses
                | Endpoint::OllamaChat
        )
    }
}

/// An llm exchange that carried an answer and gave no turns: its tokens are in no
/// count, and a reader must be told why rather than shown "0 tokens".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turnless {
    /// The exchange (`http.req`).
    pub n: u64,
    /// The line of its `llm.request` / `llm.exchange` event (1-based, in the pass that
    /// read it).
    pub line: u64,
    /// `method path`, as recorded (`POST /v1beta/models/x:generateContent`).
    pub what: String,
    /// Why it has no turns: [`Turnless::UNKNOWN_ENDPOINT`] or [`Turnless::UNREAD_BODY`].
    pub why: &'static str,
}

impl Turnless {
    /// The endpoint is not one whose exchanges reel reads into turns.
    pub const UNKNOWN_ENDPOINT: &'static str = "an endpoint reel does not read into turns";
    /// A generation endpoint whose request body reel could not read.
    pub const UNREAD_BODY: &'static str = "a request body reel could not read";
}

/// Which llm exchanges gave no turns, read from a trace's lines as they pass: the one
/// rule `reel check`, `reel stats`, `reel ls` and the recorder's end line share.
///
/// An exchange counts when it was a `POST` answered below 400 with a body
/// (`reel.llm.body` pieces), to an endpoint that is not a known non-generating one
/// (`models`, `count_tokens`, `embeddings`), and no turn names it (`http.req`).
#[derive(Debug, Default)]
pub struct TurnCoverage {
    exchanges: std::collections::BTreeMap<u64, Exchange>,
}

#[derive(Debug, Default)]
struct Exchange {
    line: u64,
    what: Option<(String, String)>,
    answered: bool,
    body: bool,
    turns: bool,
}

impl TurnCoverage {
    /// An `llm.request` or `llm.exchange` event of exchange `n` at `line`, its `raw`.
    pub fn exchange(&mut self, n: u64, line: u64, raw: &serde_json::Value) {
        let s = |k: &str| raw.get(k).and_then(serde_json::Value::as_str).unwrap_or("");
        let status = raw
            .get("status")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(200);
        let e = self.exchanges.entry(n).or_default();
        e.line = line;
        e.what = Some((s("method").to_owned(), s("endpoint").to_owned()));
        e.answered = status < 400;
    }

    /// An event line at `line`: an `llm.request` / `llm.exchange` or a `reel.llm.body`
    /// piece is taken in (other kinds are not this rule's); true for an exchange's event.
    pub fn event(&mut self, e: &crate::line::MessageView<'_>, line: u64) -> bool {
        use crate::line::kinds;
        match e.kind.as_deref() {
            Some(kinds::LLM_REQUEST | kinds::LLM_EXCHANGE) => {
                let raw = e.raw_str().and_then(|r| serde_json::from_str(r).ok());
                if let Some(raw) = raw {
                    self.exchange(e.http_req(), line, &raw);
                }
                true
            }
            Some(kinds::LLM_BODY) => {
                self.body(e.http_req());
                false
            }
            _ => false,
        }
    }

    /// A `reel.llm.body` piece of exchange `n`.
    pub fn body(&mut self, n: u64) {
        self.exchanges.entry(n).or_default().body = true;
    }

    /// A turn of exchange `n`.
    pub fn turn(&mut self, n: u64) {
        self.exchanges.entry(n).or_default().turns = true;
    }

    /// The exchanges that gave no turns, in order.
    pub fn turnless(&self) -> Vec<Turnless> {
        self.exchanges
            .iter()
            .filter(|(_, e)| e.answered && e.body && !e.turns)
            .filter_map(|(&n, e)| {
                let (method, endpoint) = e.what.as_ref()?;
                if !method.eq_ignore_ascii_case("POST") {
                    return None;
                }
                let why = match Endpoint::of(endpoint, false).0 {
                    Endpoint::NonGeneration => return None,
                    Endpoint::Other => Turnless::UNKNOWN_ENDPOINT,
                    _ => Turnless::UNREAD_BODY,
                };
                Some(Turnless {
                    n,
                    line: e.line,
                    what: format!("{method} {endpoint}"),
                    why,
                })
            })
            .collect()
    }
}

/// What a reader says of exchanges that gave no turns: `None` for none, else one
/// sentence naming the first and why.
pub fn turnless_note(turnless: &[Turnless]) -> Option<String> {
    let first = turnless.first()?;
    let n = turnless.len();
    Some(format!(
        "{n} llm exchange{s} carried an answer but gave no turns (first: {}: {}), so {their}          tokens are not counted",
        first.what,
        first.why,
        s = if n == 1 { "" } else { "s" },
        their = if n == 1 { "its" } else { "their" },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_classified_and_the_anthropic_header_wins() {
        assert_eq!(
            Endpoint::of("/v1/messages", false),
            (Endpoint::Messages, Provider::Anthropic)
        );
        assert_eq!(
            Endpoint::of("/v1/models", true),
            (Endpoint::NonGeneration, Provider::Anthropic)
        );
        assert_eq!(
            Endpoint::of("/v1/models", false),
            (Endpoint::NonGeneration, Provider::OpenAi)
        );
        assert_eq!(
            Endpoint::of("/v1/files", false),
            (Endpoint::Other, Provider::OpenAi)
        );
    }

    #[test]
    fn a_known_endpoint_without_its_version_is_the_versioned_one() {
        assert_eq!(canonical_path("/messages"), "/v1/messages");
        assert_eq!(canonical_path("/chat/completions"), "/v1/chat/completions");
        assert_eq!(canonical_path("/responses/"), "/v1/responses");
        assert_eq!(canonical_path("/v1/messages"), "/v1/messages");
        assert_eq!(canonical_path("/api/chat"), "/api/chat");
        assert_eq!(canonical_path("/chat"), "/chat");
        assert_eq!(
            canonical_path("/v1beta/models/g:generateContent"),
            "/v1beta/models/g:generateContent"
        );
        assert_eq!(
            Endpoint::of("/messages", true),
            (Endpoint::Messages, Provider::Anthropic)
        );
    }

    #[test]
    fn exchanges_without_turns_are_named_with_why() {
        use serde_json::json;
        let mut c = TurnCoverage::default();
        // 1: a generation with its turns; 2: an unknown endpoint; 3: a models list;
        // 4: an error status; 5: a generation whose request was not read; 6: no body.
        for (n, method, endpoint, status) in [
            (1, "POST", "/v1/messages", 200),
            (2, "POST", "/v1beta/models/g:streamGenerateContent", 200),
            (3, "GET", "/v1/models", 200),
            (4, "POST", "/v1/files", 500),
            (5, "POST", "/v1/chat/completions", 200),
            (6, "POST", "/v1/other", 200),
        ] {
            c.exchange(
                n,
                n * 10,
                &json!({"method": method, "endpoint": endpoint, "status": status}),
            );
            if n != 6 {
                c.body(n);
            }
        }
        c.turn(1);
        let t = c.turnless();
        assert_eq!(t.len(), 2, "{t:?}");
        assert_eq!(
            (t[0].n, t[0].line, t[0].why),
            (2, 20, Turnless::UNKNOWN_ENDPOINT)
        );
        assert_eq!(t[0].what, "POST /v1beta/models/g:streamGenerateContent");
        assert_eq!((t[1].n, t[1].why), (5, Turnless::UNREAD_BODY));
        let note = turnless_note(&t).unwrap();
        assert!(
            note.starts_with("2 llm exchanges carried an answer but gave no turns"),
            "{note}"
        );
        assert_eq!(turnless_note(&[]), None);
    }

    #[test]
    fn an_unknown_path_is_read_by_its_body() {
        let chat = br#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#;
        assert_eq!(
            Endpoint::of_body(chat, false),
            Some((Endpoint::ChatCompletions, Provider::OpenAi))
        );
        assert_eq!(
            Endpoint::of_body(chat, true),
            Some((Endpoint::Messages, Provider::Anthropic))
        );
        assert_eq!(
            Endpoint::of_body(br#"{"model":"m","input":"hi"}"#, false),
            Some((Endpoint::Responses, Provider::OpenAi))
        );
        assert_eq!(Endpoint::of_body(br#"{"messages":[]}"#, false), None);
        assert_eq!(
            Endpoint::of_body(br#"{"model":"m","messages":"x"}"#, false),
            None
        );
        assert_eq!(Endpoint::of_body(b"not json", false), None);
        assert_eq!(
            Endpoint::of_body(br#"{"contents":[],"model":"g"}"#, false),
            None
        );
    }
}
