//! Reading a request body: what the trace says about it (`model`, `stream`, `system`,
//! the number of tools) and its conversation — the messages (Anthropic, chat
//! completions, Ollama) or input items (Responses) — as turn records.
//!
//! Turns are provider-shaped: Anthropic's blocks as they are; OpenAI messages mapped to
//! the same block types (`tool_calls` → `tool_use`, a `tool` message → a user turn with
//! a `tool_result`, reasoning → `thinking`). Every assistant turn that comes from a
//! request is `echoed: true`: a request never carries a generation. Thinking signatures
//! are dropped (format.md: producers SHOULD), and inline image data is replaced by its
//! size and SHA-256, so a trace does not carry megabytes of base64 per screenshot (the
//! request itself keeps it; see `crate::tape`).

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use reel_trace::hash::{RollingHash, sha256_hex};
use reel_trace::line::{Block, Turn};

use crate::api::Endpoint;

/// A request body, read.
#[derive(Debug, Default)]
pub struct Request<'a> {
    /// `model`.
    pub model: Option<String>,
    /// `stream: true`.
    pub stream: bool,
    /// The top-level system prompt (`system`, Responses' `instructions`).
    pub system: Option<&'a RawValue>,
    /// How many tool definitions it carried.
    pub tools_count: usize,
    /// The conversation: `messages`, or Responses' `input` when it is an array.
    pub messages: Vec<&'a RawValue>,
    /// Responses' `input` when it is a string.
    pub input_text: Option<String>,
    /// Chat completions' `stream_options.include_usage`: the stream ends with a chunk
    /// that carries the usage, after the one with the finish reason.
    pub usage_chunk: bool,
}

#[derive(Deserialize)]
struct Wire<'a> {
    #[serde(default)]
    model: Option<Value>,
    #[serde(default)]
    stream: Option<Value>,
    #[serde(default, borrow)]
    system: Option<&'a RawValue>,
    #[serde(default, borrow)]
    instructions: Option<&'a RawValue>,
    #[serde(default, borrow)]
    tools: Option<Vec<&'a RawValue>>,
    #[serde(default, borrow)]
    messages: Option<Vec<&'a RawValue>>,
    #[serde(default, borrow)]
    input: Option<&'a RawValue>,
    #[serde(default)]
    stream_options: Option<Value>,
}

impl<'a> Request<'a> {
    /// Reads `body` as a request to `endpoint`; `None` when it is not a JSON object.
    pub fn parse(endpoint: Endpoint, body: &'a str) -> Option<Request<'a>> {
        // serde reads a struct from an array too (member by position): not a request.
        if !body.trim_start().starts_with('{') {
            return None;
        }
        let w: Wire<'a> = serde_json::from_str(body).ok()?;
        let mut r = Request {
            model: w.model.and_then(|m| m.as_str().map(str::to_owned)),
            // Ollama streams unless told not to.
            stream: match w.stream {
                Some(Value::Bool(b)) => b,
                _ => endpoint == Endpoint::OllamaChat,
            },
            system: w.system.or(w.instructions),
            tools_count: w.tools.map_or(0, |t| t.len()),
            messages: w.messages.unwrap_or_default(),
            input_text: None,
            usage_chunk: w
                .stream_options
                .as_ref()
                .and_then(|o| o.get("include_usage"))
                .and_then(Value::as_bool)
                .unwrap_or(false),
        };
        if endpoint == Endpoint::Responses {
            if let Some(input) = w.input {
                match serde_json::from_str::<Value>(input.get()) {
                    Ok(Value::String(s)) => r.input_text = Some(s),
                    _ => {
                        r.messages =
                            serde_json::from_str::<Vec<&RawValue>>(input.get()).unwrap_or_default();
                    }
                }
            }
        }
        Some(r)
    }

    /// The rolling hash of every prefix of the conversation: `rolling[k]` covers the
    /// first `k` messages (format.md, "Rolling-hash construction").
    pub fn prefixes(&self) -> Vec<String> {
        let mut h = RollingHash::new();
        let mut out = Vec::with_capacity(self.messages.len() + 1);
        out.push(h.digest());
        for m in &self.messages {
            if h.push_json(m.get()).is_err() {
                break;
            }
            out.push(h.digest());
        }
        out
    }

    /// The system prompt as the trace's `llm.request.raw.system`: the text when it is
    /// a string or text blocks, else the value.
    pub fn system_value(&self) -> Option<Value> {
        let v: Value = serde_json::from_str(self.system?.get()).ok()?;
        Some(match &v {
            Value::Array(blocks) if blocks.iter().all(|b| b.get("text").is_some()) => {
                Value::String(
                    blocks
                        .iter()
                        .filter_map(|b| b["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n\n"),
                )
            }
            _ => v,
        })
    }

    /// The turns of messages `from..`, in order (consecutive Responses items of one
    /// role are one turn).
    pub fn turns(&self, endpoint: Endpoint, from: usize) -> Vec<Turn> {
        let mut turns: Vec<Turn> = Vec::new();
        if from == 0 {
            if let Some(text) = &self.input_text {
                turns.push(turn("user", vec![text_block(text)]));
            }
        }
        for m in self.messages.iter().skip(from) {
            let Ok(v) = serde_json::from_str::<Value>(m.get()) else {
                continue;
            };
            let (role, blocks) = match endpoint {
                Endpoint::Messages => anthropic_message(&v),
                Endpoint::Responses => responses_item(&v),
                _ => openai_message(&v),
            };
            let merge = endpoint == Endpoint::Responses
                && turns
                    .last()
                    .is_some_and(|t| t.role.as_deref() == Some(role));
            if merge {
                if let Some(last) = turns.last_mut() {
                    last.blocks.get_or_insert_with(Vec::new).extend(blocks);
                }
            } else {
                turns.push(turn(role, blocks));
            }
        }
        for t in &mut turns {
            if t.role.as_deref() == Some("assistant") {
                t.echoed = Some(true);
            }
        }
        turns
    }
}

fn turn(role: &str, blocks: Vec<Block>) -> Turn {
    Turn {
        role: Some(role.to_owned()),
        blocks: Some(blocks),
        ..Turn::default()
    }
}

/// A block from its provider-shaped value (unknown shapes are kept whole).
pub(crate) fn block(v: Value) -> Block {
    serde_json::from_value(v.clone()).unwrap_or(Block::Other(v))
}

pub(crate) fn text_block(text: &str) -> Block {
    block(json!({ "type": "text", "text": text }))
}

/// Anthropic blocks as the trace keeps them: signatures dropped, image data summarised.
pub(crate) fn anthropic_block(mut b: Value) -> Block {
    if let Some(o) = b.as_object_mut() {
        if o.get("type").and_then(Value::as_str) == Some("thinking") {
            o.remove("signature");
        }
        if let Some(source) = o.get_mut("source").and_then(Value::as_object_mut) {
            summarise_data(source);
        }
        if let Some(Value::Array(parts)) = o.get_mut("content") {
            for p in parts.iter_mut() {
                if let Some(source) = p.get_mut("source").and_then(Value::as_object_mut) {
                    summarise_data(source);
                }
            }
        }
    }
    block(b)
}

/// Replaces an inline base64 `data` member by `data_bytes` and `data_sha256`.
fn summarise_data(source: &mut Map<String, Value>) {
    if let Some(Value::String(data)) = source.remove("data") {
        source.insert("data_bytes".into(), data.len().into());
        source.insert("data_sha256".into(), sha256_hex(data.as_bytes()).into());
    }
}

fn role_of(v: &Value) -> &str {
    match v.get("role").and_then(Value::as_str) {
        Some("assistant") => "assistant",
        Some("system" | "developer") => "system",
        _ => "user",
    }
}

fn anthropic_message(v: &Value) -> (&'static str, Vec<Block>) {
    let role = if role_of(v) == "assistant" {
        "assistant"
    } else {
        "user"
    };
    let blocks = match v.get("content") {
        Some(Value::String(s)) => vec![text_block(s)],
        Some(Value::Array(parts)) => parts.iter().cloned().map(anthropic_block).collect(),
        _ => Vec::new(),
    };
    (role, blocks)
}

/// OpenAI content (a string or content parts) as blocks.
fn openai_content(content: Option<&Value>) -> Vec<Block> {
    match content {
        Some(Value::String(s)) if !s.is_empty() => vec![text_block(s)],
        Some(Value::Array(parts)) => parts.iter().map(openai_part).collect(),
        _ => Vec::new(),
    }
}

fn openai_part(p: &Value) -> Block {
    match p.get("type").and_then(Value::as_str) {
        Some("text" | "input_text" | "output_text") => {
            text_block(p.get("text").and_then(Value::as_str).unwrap_or(""))
        }
        Some("refusal") => text_block(p.get("refusal").and_then(Value::as_str).unwrap_or("")),
        Some("image_url" | "input_image") => {
            let url = p
                .get("image_url")
                .map(|u| u.get("url").unwrap_or(u))
                .and_then(Value::as_str)
                .unwrap_or("");
            let source = if url.starts_with("data:") {
                json!({ "type": "base64", "data_bytes": url.len(), "data_sha256": sha256_hex(url.as_bytes()) })
            } else {
                json!({ "type": "url", "url": url })
            };
            block(json!({ "type": "image", "source": source }))
        }
        _ => block(p.clone()),
    }
}

/// `arguments` (a JSON string) as a `tool_use` input: the object it holds, or the
/// string under `arguments` when it is not one.
pub(crate) fn tool_input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ if arguments.trim().is_empty() => json!({}),
        _ => json!({ "arguments": arguments }),
    }
}

pub(crate) fn tool_use(id: &str, name: &str, input: Value) -> Block {
    block(json!({ "type": "tool_use", "id": id, "name": name, "input": input }))
}

fn openai_message(v: &Value) -> (&'static str, Vec<Block>) {
    match v.get("role").and_then(Value::as_str) {
        Some("tool" | "function") => {
            let id = v
                .get("tool_call_id")
                .or_else(|| v.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("");
            let content = v.get("content").cloned().unwrap_or(Value::Null);
            (
                "user",
                vec![block(
                    json!({ "type": "tool_result", "tool_use_id": id, "content": content }),
                )],
            )
        }
        Some("assistant") => ("assistant", openai_assistant(v)),
        _ => {
            let role = if role_of(v) == "system" {
                "system"
            } else {
                "user"
            };
            (role, openai_content(v.get("content")))
        }
    }
}

/// An OpenAI assistant message as blocks: its reasoning (`reasoning_content`,
/// `reasoning`, `thinking`), content, refusal and tool calls. The same shape whether the
/// message is a chat completion's answer or resent in a later request.
pub(crate) fn openai_assistant(v: &Value) -> Vec<Block> {
    let mut blocks = Vec::new();
    for key in ["reasoning_content", "reasoning", "thinking"] {
        if let Some(Value::String(t)) = v.get(key) {
            if !t.is_empty() {
                blocks.push(block(json!({ "type": "thinking", "thinking": t })));
            }
        }
    }
    blocks.extend(openai_content(v.get("content")));
    if let Some(Value::String(t)) = v.get("refusal") {
        blocks.push(text_block(t));
    }
    for c in v
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let f = c.get("function").unwrap_or(c);
        let args = match f.get("arguments") {
            Some(Value::String(s)) => tool_input(s),
            Some(other) => other.clone(),
            None => json!({}),
        };
        blocks.push(tool_use(
            c.get("id").and_then(Value::as_str).unwrap_or(""),
            f.get("name").and_then(Value::as_str).unwrap_or(""),
            args,
        ));
    }
    blocks
}

/// A Responses output item (`message`, `function_call`, `reasoning`, …) as blocks.
pub(crate) fn responses_output(item: &Value) -> Vec<Block> {
    match item.get("type").and_then(Value::as_str) {
        Some("function_call") => vec![tool_use(
            item.get("call_id").and_then(Value::as_str).unwrap_or(""),
            item.get("name").and_then(Value::as_str).unwrap_or(""),
            tool_input(item.get("arguments").and_then(Value::as_str).unwrap_or("")),
        )],
        Some("reasoning") => {
            let text: Vec<&str> = item
                .get("summary")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .chain(
                    item.get("content")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten(),
                )
                .filter_map(|s| s.get("text").and_then(Value::as_str))
                .collect();
            vec![block(
                json!({ "type": "thinking", "thinking": text.join("\n\n") }),
            )]
        }
        Some("message") | None if item.get("content").is_some() => {
            openai_content(item.get("content"))
        }
        _ => vec![block(item.clone())],
    }
}

fn responses_item(v: &Value) -> (&'static str, Vec<Block>) {
    match v.get("type").and_then(Value::as_str) {
        Some("function_call_output") => {
            let id = v.get("call_id").and_then(Value::as_str).unwrap_or("");
            let content = v.get("output").cloned().unwrap_or(Value::Null);
            (
                "user",
                vec![block(
                    json!({ "type": "tool_result", "tool_use_id": id, "content": content }),
                )],
            )
        }
        Some("function_call" | "reasoning") => ("assistant", responses_output(v)),
        Some("message") | None => {
            let role = match role_of(v) {
                "assistant" => "assistant",
                "system" => "system",
                _ => "user",
            };
            (role, openai_content(v.get("content")))
        }
        _ => ("user", vec![block(v.clone())]),
    }
}

/// The member that holds a request's conversation: `input` (Responses), else
/// `messages`. Pointers into a request name it so (`/input/5/output`).
pub fn conversation_member(endpoint: Endpoint) -> &'static str {
    if endpoint == Endpoint::Responses {
        "input"
    } else {
        "messages"
    }
}

/// The members of a request that replay matches on, as the trace keeps them in
/// `llm.request.request.body`: the request with its first `elided` conversation
/// messages removed, tool definitions replaced by `{name, sha256}` (the SHA-256 of the
/// definition with its keys sorted), and the top-level system prompt removed (the
/// trace has it in `raw.system`). Recording and replay build it the same way, here.
pub fn matchable(endpoint: Endpoint, body: &str, elided: usize) -> Option<Value> {
    let mut v: Value = serde_json::from_str(body).ok()?;
    let o = v.as_object_mut()?;
    o.remove("system");
    o.remove("instructions");
    let key = conversation_member(endpoint);
    if let Some(Value::Array(m)) = o.get_mut(key) {
        m.drain(..elided.min(m.len()));
    }
    if let Some(Value::Array(tools)) = o.get_mut("tools") {
        for t in tools.iter_mut() {
            let text = serde_json::to_string(t).unwrap_or_default();
            let digest = reel_trace::hash::js_stringify(&text)
                .map(|s| sha256_hex(s.as_bytes()))
                .unwrap_or_default();
            let name = t
                .get("name")
                .or_else(|| t.pointer("/function/name"))
                .cloned()
                .unwrap_or(Value::Null);
            *t = json!({ "name": name, "sha256": digest });
        }
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_anthropic_conversation_becomes_turns_with_the_resent_answer_echoed() {
        let body = r#"{"model":"m","stream":true,"system":[{"type":"text","text":"Be brief."}],
            "tools":[{"name":"get_weather"}],
            "messages":[{"role":"user","content":"Weather?"},
              {"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"sig"},
                {"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}]},
              {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"sunny"}]}]}"#;
        let r = Request::parse(Endpoint::Messages, body).unwrap();
        assert!(r.stream);
        assert_eq!(r.tools_count, 1);
        assert_eq!(r.system_value(), Some(json!("Be brief.")));
        let turns = r.turns(Endpoint::Messages, 0);
        assert_eq!(turns.len(), 3);
        assert_eq!(turns[1].echoed, Some(true));
        assert_eq!(turns[0].echoed, None);
        let thinking = serde_json::to_value(&turns[1].blocks()[0]).unwrap();
        assert!(thinking.get("signature").is_none(), "{thinking}");
        assert_eq!(r.turns(Endpoint::Messages, 2).len(), 1);
        assert_eq!(r.prefixes().len(), 4);
    }

    #[test]
    fn openai_tool_calls_and_tool_messages_map_to_blocks() {
        let body = r#"{"model":"m","messages":[{"role":"system","content":"s"},
            {"role":"user","content":"q"},
            {"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",
              "function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
            {"role":"tool","tool_call_id":"call_1","content":"sunny"}]}"#;
        let r = Request::parse(Endpoint::ChatCompletions, body).unwrap();
        let turns = r.turns(Endpoint::ChatCompletions, 0);
        let roles: Vec<_> = turns.iter().map(|t| t.role.clone().unwrap()).collect();
        assert_eq!(roles, ["system", "user", "assistant", "user"]);
        assert_eq!(
            serde_json::to_value(&turns[2].blocks()[0]).unwrap()["input"]["city"],
            "Paris"
        );
        assert_eq!(
            serde_json::to_value(&turns[3].blocks()[0]).unwrap()["tool_use_id"],
            "call_1"
        );
    }

    #[test]
    fn responses_items_of_one_role_are_one_turn() {
        let body = r#"{"model":"m","instructions":"s","input":[
            {"role":"user","content":"q"},
            {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"hm"}]},
            {"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},
            {"type":"function_call_output","call_id":"c1","output":"ok"}]}"#;
        let r = Request::parse(Endpoint::Responses, body).unwrap();
        assert_eq!(r.system_value(), Some(json!("s")));
        let turns = r.turns(Endpoint::Responses, 0);
        assert_eq!(turns.len(), 3);
        assert_eq!(turns[1].blocks().len(), 2);
        let r = Request::parse(Endpoint::Responses, r#"{"input":"hi"}"#).unwrap();
        assert_eq!(r.turns(Endpoint::Responses, 0).len(), 1);
    }

    #[test]
    fn an_anthropic_request_gives_model_stream_system_tools_and_messages() {
        let body = r#"{"model":"claude-x","max_tokens":1024,"stream":true,
            "system":[{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral"}},
                      {"type":"text","text":"Use tools."}],
            "tools":[{"name":"a","input_schema":{}},{"name":"b","input_schema":{}}],
            "messages":[{"role":"user","content":"hi"}],
            "metadata":{"user_id":"u"},"a_future_member":{"x":1}}"#;
        let r = Request::parse(Endpoint::Messages, body).unwrap();
        assert_eq!(r.model.as_deref(), Some("claude-x"));
        assert!(r.stream);
        assert!(!r.usage_chunk);
        assert_eq!(r.tools_count, 2);
        assert_eq!(r.messages.len(), 1);
        assert_eq!(r.input_text, None);
        // Text blocks read as the one text they make.
        assert_eq!(r.system_value(), Some(json!("Be brief.\n\nUse tools.")));
        assert_eq!(r.prefixes().len(), 2, "the empty prefix and one message");
    }

    #[test]
    fn a_chat_request_asks_for_its_usage_chunk_and_ollama_streams_unless_told_not_to() {
        let chat = r#"{"model":"gpt-x","stream":true,"stream_options":{"include_usage":true},
            "messages":[{"role":"system","content":"s"},{"role":"user","content":"q"}]}"#;
        let r = Request::parse(Endpoint::ChatCompletions, chat).unwrap();
        assert!(r.stream && r.usage_chunk);
        assert!(r.system.is_none(), "a chat system prompt is a message");
        assert_eq!(r.messages.len(), 2);
        let ollama = r#"{"model":"llama3.2","messages":[]}"#;
        assert!(Request::parse(Endpoint::OllamaChat, ollama).unwrap().stream);
        assert!(
            !Request::parse(Endpoint::ChatCompletions, ollama)
                .unwrap()
                .stream
        );
        let told = r#"{"model":"llama3.2","stream":false}"#;
        assert!(!Request::parse(Endpoint::OllamaChat, told).unwrap().stream);
    }

    #[test]
    fn a_responses_request_reads_instructions_and_a_string_or_list_input() {
        let r = Request::parse(
            Endpoint::Responses,
            r#"{"model":"gpt-5","instructions":"Be kind.","input":"hello"}"#,
        )
        .unwrap();
        assert_eq!(r.system_value(), Some(json!("Be kind.")));
        assert_eq!(r.input_text.as_deref(), Some("hello"));
        assert!(r.messages.is_empty());
        let r = Request::parse(
            Endpoint::Responses,
            r#"{"input":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}"#,
        )
        .unwrap();
        assert_eq!(r.input_text, None);
        assert_eq!(r.messages.len(), 2);
        // `input` is Responses' member only: a chat request's is not its conversation.
        let r = Request::parse(Endpoint::ChatCompletions, r#"{"input":"x"}"#).unwrap();
        assert_eq!((r.input_text, r.messages.len()), (None, 0));
    }

    #[test]
    fn a_body_that_is_not_a_json_object_is_no_request() {
        assert!(Request::parse(Endpoint::Messages, "").is_none());
        assert!(Request::parse(Endpoint::Messages, r#""text""#).is_none());
        assert!(Request::parse(Endpoint::Messages, r#"["m", true]"#).is_none());
        assert!(Request::parse(Endpoint::Messages, r#"{"model":"m""#).is_none());
        // A model that is not a string is no model; the rest still reads.
        let r = Request::parse(Endpoint::Messages, r#"{"model":7,"messages":[]}"#).unwrap();
        assert_eq!(r.model, None);
    }

    #[test]
    fn the_matchable_request_drops_system_and_elided_messages_and_digests_tools() {
        let body = r#"{"model":"m","system":"s","tools":[
            {"name":"get","input_schema":{"b":1,"a":2}},
            {"type":"function","function":{"name":"put","parameters":{}}}],
            "messages":[{"role":"user","content":"1"},{"role":"assistant","content":"2"},
                        {"role":"user","content":"3"}]}"#;
        let m = matchable(Endpoint::Messages, body, 2).unwrap();
        assert_eq!(m.get("system"), None);
        assert_eq!(m["messages"], json!([{"role": "user", "content": "3"}]));
        assert_eq!(m["tools"][0]["name"], "get");
        assert_eq!(m["tools"][1]["name"], "put");
        let digest = m["tools"][0]["sha256"].as_str().unwrap();
        assert_eq!(digest.len(), 64);
        // Key order does not change a tool's digest.
        let reordered = body.replace(r#"{"b":1,"a":2}"#, r#"{"a":2,"b":1}"#);
        let again = matchable(Endpoint::Messages, &reordered, 2).unwrap();
        assert_eq!(again["tools"][0]["sha256"], m["tools"][0]["sha256"]);
        assert_ne!(m["tools"][0]["sha256"], m["tools"][1]["sha256"]);
        // More elided than there are: all go.
        let all = matchable(Endpoint::Messages, body, 9).unwrap();
        assert_eq!(all["messages"], json!([]));
        let responses = matchable(
            Endpoint::Responses,
            r#"{"instructions":"i","input":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}"#,
            1,
        )
        .unwrap();
        assert_eq!(
            responses,
            json!({"input": [{"role": "user", "content": "b"}]})
        );
        assert_eq!(matchable(Endpoint::Messages, "[]", 0), None);
    }
}
