//! The assembler as a function of what providers send: whole bodies, streamed events,
//! streams cut short, unknown members and error bodies, per provider.

use super::*;

fn blocks(t: &Turn) -> Value {
    serde_json::to_value(t.blocks()).unwrap()
}

#[test]
fn an_anthropic_stream_is_assembled_with_usage_as_reported() {
    let mut a = Assembler::new(Endpoint::Messages);
    let events = [
        (
            "message_start",
            r#"{"type":"message_start","message":{"model":"claude-x","content":[],"usage":{"input_tokens":11,"output_tokens":1,"cache_read_input_tokens":5,"cache_creation_input_tokens":3}}}"#,
        ),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"s"}}"#,
        ),
        (
            "content_block_stop",
            r#"{"type":"content_block_stop","index":0}"#,
        ),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\":"}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"Paris\"}"}}"#,
        ),
        (
            "content_block_stop",
            r#"{"type":"content_block_stop","index":1}"#,
        ),
        (
            "message_delta",
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":7}}"#,
        ),
        ("message_stop", r#"{"type":"message_stop"}"#),
    ];
    for (e, d) in events {
        a.sse_event(e, d);
    }
    assert!(a.ended());
    let t = a.finish(false);
    assert_eq!(t.model.as_deref(), Some("claude-x"));
    assert_eq!(t.stop_reason.as_deref(), Some("tool_use"));
    let u = t.usage.clone().unwrap();
    assert_eq!(
        (
            u.input_tokens,
            u.output_tokens,
            u.cache_read_input_tokens,
            u.cache_creation_input_tokens
        ),
        (Some(11), Some(7), Some(5), Some(3))
    );
    let b = blocks(&t);
    assert_eq!(b[0], json!({"type": "thinking", "thinking": "hm"}));
    assert_eq!(b[1]["input"], json!({"city": "Paris"}));
}

#[test]
fn openai_usage_is_normalised_to_the_invariant() {
    let mut a = Assembler::new(Endpoint::ChatCompletions);
    a.sse_event(
        "",
        r#"{"model":"gpt-x","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}"#,
    );
    a.sse_event(
        "",
        r#"{"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}"#,
    );
    a.sse_event("", r#"{"choices":[],"usage":{"prompt_tokens":20,"completion_tokens":9,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":3}}}"#);
    a.sse_event("", "[DONE]");
    let t = a.finish(false);
    let u = t.usage.clone().unwrap();
    assert_eq!(
        (
            u.input_tokens,
            u.output_tokens,
            u.cache_read_input_tokens,
            u.thinking_tokens
        ),
        (Some(16), Some(9), Some(4), Some(3))
    );
    assert_eq!(blocks(&t), json!([{"type": "text", "text": "Hello"}]));
}

#[test]
fn the_last_event_with_content_completes_an_answer_before_its_end_marker() {
    let mut a = Assembler::new(Endpoint::Messages);
    a.sse_event(
        "message_start",
        r#"{"type":"message_start","message":{"model":"m","usage":{"input_tokens":3}}}"#,
    );
    a.sse_event(
        "message_delta",
        r#"{"type":"message_delta","delta":{"stop_reason":null},"usage":{"output_tokens":1}}"#,
    );
    assert!(!a.complete(), "no stop reason yet");
    a.sse_event("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}}"#);
    assert!(a.complete() && !a.ended());
    assert_eq!(a.finish(false).stop_reason.as_deref(), Some("end_turn"));

    // A chat stream that asked for usage is complete with the usage chunk only.
    let mut c = Assembler::new(Endpoint::ChatCompletions);
    c.expect_usage_chunk(true);
    c.sse_event(
        "",
        r#"{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}"#,
    );
    c.sse_event(
        "",
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}"#,
    );
    assert!(!c.complete(), "the usage chunk is still to come");
    c.sse_event(
        "",
        r#"{"choices":[],"usage":{"prompt_tokens":2,"completion_tokens":1}}"#,
    );
    assert!(c.complete() && !c.ended());
    let mut d = Assembler::new(Endpoint::ChatCompletions);
    d.sse_event(
        "",
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#,
    );
    assert!(
        d.complete(),
        "no usage asked: the finish reason is the last content"
    );
    let mut e = Assembler::new(Endpoint::Responses);
    e.sse_event(
        "response.output_text.delta",
        r#"{"type":"response.output_text.delta","output_index":0,"delta":"x"}"#,
    );
    assert!(!e.complete());
}

#[test]
fn a_severed_stream_keeps_what_arrived() {
    let mut a = Assembler::new(Endpoint::ChatCompletions);
    a.sse_event("", r#"{"choices":[{"index":0,"delta":{"content":"Hel"}}]}"#);
    assert!(!a.ended());
    let t = a.finish(true);
    assert_eq!(t.truncated, Some(true));
    assert_eq!(t.stop_reason.as_deref(), Some("truncated"));
    assert_eq!(blocks(&t), json!([{"type": "text", "text": "Hel"}]));
}

#[test]
fn a_responses_stream_takes_the_completed_response() {
    let mut a = Assembler::new(Endpoint::Responses);
    a.sse_event(
        "response.output_text.delta",
        r#"{"type":"response.output_text.delta","output_index":0,"delta":"Hi"}"#,
    );
    a.sse_event("response.completed", r#"{"type":"response.completed","response":{"model":"gpt-y","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"Hi"}]}],"usage":{"input_tokens":20,"output_tokens":9,"input_tokens_details":{"cached_tokens":4},"output_tokens_details":{"reasoning_tokens":0}}}}"#);
    let t = a.finish(false);
    assert_eq!(t.usage.clone().unwrap().input_tokens, Some(16));
    assert_eq!(t.usage.clone().unwrap().thinking_tokens, None);
    assert_eq!(blocks(&t), json!([{"type": "text", "text": "Hi"}]));
    assert_eq!(t.stop_reason.as_deref(), Some("completed"));
}

#[test]
fn a_huge_answer_keeps_its_first_bytes_and_says_how_many_it_left_out() {
    let mut a = Assembler::new(Endpoint::ChatCompletions);
    let piece = "x".repeat(1 << 20);
    let chunk =
        serde_json::to_string(&json!({"choices":[{"index":0,"delta":{"content":piece}}]})).unwrap();
    for _ in 0..10 {
        a.sse_event("", &chunk);
    }
    let t = a.finish(false);
    let text = serde_json::to_value(&t.blocks()[0]).unwrap()["text"]
        .as_str()
        .unwrap()
        .len();
    assert_eq!(text, TURN_CONTENT_MAX);
    assert_eq!(
        t.extra["omitted_bytes"],
        json!((10 << 20) - TURN_CONTENT_MAX)
    );
}

/// Feeds SSE events `(event, data)` to a new assembler for `endpoint`; returns it and
/// whether each event added content.
fn streamed(endpoint: Endpoint, events: &[(&str, &str)]) -> (Assembler, Vec<bool>) {
    let mut a = Assembler::new(endpoint);
    let added = events.iter().map(|(e, d)| a.sse_event(e, d)).collect();
    (a, added)
}

fn whole(endpoint: Endpoint, body: &str) -> Assembler {
    let mut a = Assembler::new(endpoint);
    a.whole_body(body.as_bytes());
    a
}

/// Token counts in the order input, output, cache read, cache creation, thinking.
type Counts = [Option<u64>; 5];

/// A turn's normalised usage as [`Counts`].
fn usage_of(t: &Turn) -> Counts {
    let u = t.usage.clone().expect("usage was reported");
    [
        u.input_tokens,
        u.output_tokens,
        u.cache_read_input_tokens,
        u.cache_creation_input_tokens,
        u.thinking_tokens,
    ]
}

// --- Anthropic Messages ------------------------------------------------------------

#[test]
fn an_anthropic_whole_body_gives_model_usage_stop_reason_and_its_blocks() {
    let a = whole(
        Endpoint::Messages,
        r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",
            "content":[
              {"type":"thinking","thinking":"plan","signature":"c2lnbmF0dXJl"},
              {"type":"text","text":"Checking."},
              {"type":"tool_use","id":"toolu_9","name":"get_weather","input":{"city":"Oslo"}}],
            "stop_reason":"tool_use","stop_sequence":null,
            "usage":{"input_tokens":120,"output_tokens":40,"cache_read_input_tokens":100,
                     "cache_creation_input_tokens":7,"service_tier":"standard"}}"#,
    );
    assert!(a.ended() && a.complete());
    assert_eq!(a.stream_error(), None);
    let t = a.finish(false);
    assert_eq!(t.role.as_deref(), Some("assistant"));
    assert_eq!(t.model.as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(t.stop_reason.as_deref(), Some("tool_use"));
    assert_eq!(t.truncated, None);
    // Anthropic's input_tokens already exclude the cache: kept as reported.
    assert_eq!(
        usage_of(&t),
        [Some(120), Some(40), Some(100), Some(7), None]
    );
    assert_eq!(
        blocks(&t),
        json!([
            {"type": "thinking", "thinking": "plan"},
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_9", "name": "get_weather", "input": {"city": "Oslo"}}
        ])
    );
}

#[test]
fn an_anthropic_error_body_is_the_streams_error_and_gives_no_usage() {
    let a = whole(
        Endpoint::Messages,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}"#,
    );
    assert_eq!(a.stream_error(), Some("overloaded_error: Overloaded"));
    let t = a.finish(false);
    assert_eq!(t.usage, None);
    assert_eq!(t.model, None);
    assert_eq!(blocks(&t), json!([]));
}

#[test]
fn an_anthropic_error_event_mid_stream_is_kept_with_what_came_before() {
    let (a, _) = streamed(
        Endpoint::Messages,
        &[
            (
                "message_start",
                r#"{"type":"message_start","message":{"model":"claude-x","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Par"}}"#,
            ),
            (
                "error",
                r#"{"type":"error","error":{"type":"api_error","message":"Internal server error"}}"#,
            ),
        ],
    );
    assert_eq!(a.stream_error(), Some("api_error: Internal server error"));
    assert!(!a.complete(), "no stop reason, no end marker");
    let t = a.finish(true);
    assert_eq!(t.stop_reason.as_deref(), Some("truncated"));
    assert_eq!(t.truncated, Some(true));
    assert_eq!(blocks(&t), json!([{"type": "text", "text": "Par"}]));
    assert_eq!(usage_of(&t), [Some(5), Some(1), None, None, None]);
}

#[test]
fn an_anthropic_stream_cut_mid_tool_call_keeps_the_fragments_it_has() {
    let (a, added) = streamed(
        Endpoint::Messages,
        &[
            (
                "message_start",
                r#"{"type":"message_start","message":{"model":"claude-x","usage":{"input_tokens":9}}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_2","name":"search","input":{}}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"q\": \"ru"}}"#,
            ),
        ],
    );
    assert_eq!(added, [false, false, true]);
    assert!(!a.ended() && !a.complete());
    let t = a.finish(true);
    assert_eq!(t.stop_reason.as_deref(), Some("truncated"));
    // Cut JSON is not an object: kept as the string it is, under `arguments`.
    assert_eq!(
        blocks(&t),
        json!([{"type": "tool_use", "id": "toolu_2", "name": "search", "input": {"arguments": "{\"q\": \"ru"}}])
    );
}

#[test]
fn anthropic_events_and_members_reel_does_not_know_are_passed_over() {
    let (a, added) = streamed(
        Endpoint::Messages,
        &[
            ("ping", r#"{"type":"ping"}"#),
            (
                "message_start",
                r#"{"type":"message_start","message":{"model":"claude-x","content":[],"usage":{"input_tokens":3},"container":{"id":"c1"},"future":[1,2]}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"","citations":[]},"extra":true}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"cited_text":"x"}}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok","novel":1}}"#,
            ),
            (
                "content_block_stop",
                r#"{"type":"content_block_stop","index":0}"#,
            ),
            ("brand_new_event", r#"{"type":"brand_new_event","index":0}"#),
            ("message_delta", "not json"),
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}"#,
            ),
            ("message_stop", r#"{"type":"message_stop"}"#),
        ],
    );
    assert_eq!(
        added,
        [
            false, false, false, false, true, false, false, false, false, false
        ]
    );
    assert!(a.ended());
    let t = a.finish(false);
    assert_eq!(t.stop_reason.as_deref(), Some("end_turn"));
    assert_eq!(t.model.as_deref(), Some("claude-x"));
    assert_eq!(usage_of(&t), [Some(3), Some(2), None, None, None]);
    let b = blocks(&t);
    assert_eq!(b.as_array().map(Vec::len), Some(1));
    assert_eq!(b[0]["type"], "text");
    assert_eq!(b[0]["text"], "ok");
}

// --- OpenAI chat completions ---------------------------------------------------------

#[test]
fn a_chat_completion_gives_model_finish_reason_normalised_usage_and_tool_calls() {
    let a = whole(
        Endpoint::ChatCompletions,
        r#"{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-2024-08-06",
            "system_fingerprint":"fp_x",
            "choices":[{"index":0,"logprobs":null,"finish_reason":"tool_calls",
              "message":{"role":"assistant","content":"Let me look.","annotations":[],
                "tool_calls":[{"id":"call_a","type":"function",
                  "function":{"name":"lookup","arguments":"{\"id\":7}"}}]}}],
            "usage":{"prompt_tokens":50,"completion_tokens":12,"total_tokens":62,
              "prompt_tokens_details":{"cached_tokens":30,"audio_tokens":0},
              "completion_tokens_details":{"reasoning_tokens":4}}}"#,
    );
    assert!(a.ended() && a.complete());
    assert_eq!(a.stream_error(), None);
    let t = a.finish(false);
    assert_eq!(t.model.as_deref(), Some("gpt-4o-2024-08-06"));
    assert_eq!(t.stop_reason.as_deref(), Some("tool_calls"));
    // prompt_tokens include the cached ones: input = 50 − 30.
    assert_eq!(usage_of(&t), [Some(20), Some(12), Some(30), None, Some(4)]);
    assert_eq!(
        blocks(&t),
        json!([
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "call_a", "name": "lookup", "input": {"id": 7}}
        ])
    );
}

#[test]
fn a_chat_stream_assembles_tool_calls_from_their_fragments_in_index_order() {
    let (a, added) = streamed(
        Endpoint::ChatCompletions,
        &[
            (
                "",
                r#"{"id":"c","model":"gpt-x","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"second","arguments":""}}]}}]}"#,
            ),
            (
                "",
                r#"{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"first","arguments":"{\"a\""}}]}}]}"#,
            ),
            (
                "",
                r#"{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}},{"index":1,"function":{"arguments":"{}"}}]}}]}"#,
            ),
            (
                "",
                r#"{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            ),
            ("", "[DONE]"),
        ],
    );
    assert_eq!(added, [false, true, true, false, false]);
    assert!(a.ended());
    let t = a.finish(false);
    assert_eq!(t.model.as_deref(), Some("gpt-x"));
    assert_eq!(t.stop_reason.as_deref(), Some("tool_calls"));
    assert_eq!(t.usage, None, "no usage chunk was asked for");
    assert_eq!(
        blocks(&t),
        json!([
            {"type": "tool_use", "id": "call_1", "name": "first", "input": {"a": 1}},
            {"type": "tool_use", "id": "call_2", "name": "second", "input": {}}
        ])
    );
}

#[test]
fn a_chat_stream_puts_reasoning_before_text_whatever_their_order() {
    let (a, _) = streamed(
        Endpoint::ChatCompletions,
        &[
            (
                "",
                r#"{"choices":[{"index":0,"delta":{"content":"Answer"}}]}"#,
            ),
            (
                "",
                r#"{"choices":[{"index":0,"delta":{"reasoning_content":"Think"}}]}"#,
            ),
            (
                "",
                r#"{"choices":[{"index":0,"delta":{"content":"."},"finish_reason":"stop"}]}"#,
            ),
        ],
    );
    let t = a.finish(false);
    assert_eq!(
        blocks(&t),
        json!([
            {"type": "thinking", "thinking": "Think"},
            {"type": "text", "text": "Answer."}
        ])
    );
}

#[test]
fn a_chat_error_body_and_an_error_chunk_are_the_streams_error() {
    let a = whole(
        Endpoint::ChatCompletions,
        r#"{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#,
    );
    assert_eq!(a.stream_error(), Some("requests: Rate limit reached"));
    let t = a.finish(false);
    assert_eq!((t.model, t.usage), (None, None));

    let (a, _) = streamed(
        Endpoint::ChatCompletions,
        &[
            ("", r#"{"choices":[{"index":0,"delta":{"content":"Hi"}}]}"#),
            (
                "",
                r#"{"error":{"message":"The server had an error","code":"server_error"}}"#,
            ),
        ],
    );
    assert_eq!(
        a.stream_error(),
        Some("server_error: The server had an error")
    );
    assert!(!a.complete());
}

#[test]
fn a_chat_stream_cut_before_its_finish_reason_is_not_complete() {
    let (a, added) = streamed(
        Endpoint::ChatCompletions,
        &[
            (
                "",
                r#"{"model":"gpt-x","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#,
            ),
            ("", r#"{"choices":[{"index":0,"delta":{"content":"Par"}}]}"#),
        ],
    );
    assert_eq!(added, [false, true], "an empty delta is no content");
    assert!(!a.ended() && !a.complete());
    let t = a.finish(true);
    assert_eq!(t.model.as_deref(), Some("gpt-x"));
    assert_eq!(t.stop_reason.as_deref(), Some("truncated"));
    assert_eq!(blocks(&t), json!([{"type": "text", "text": "Par"}]));
}

#[test]
fn an_ndjson_chat_stream_reads_like_an_sse_one() {
    let mut a = Assembler::new(Endpoint::ChatCompletions);
    assert!(a.ndjson_line(r#"{"model":"m","choices":[{"index":0,"delta":{"content":"x"}}]}"#));
    assert!(!a.ndjson_line("{not json"));
    assert!(!a.ndjson_line(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#));
    assert!(a.complete());
    let t = a.finish(false);
    assert_eq!(t.stop_reason.as_deref(), Some("length"));
    assert_eq!(blocks(&t), json!([{"type": "text", "text": "x"}]));
}

// --- OpenAI Responses ----------------------------------------------------------------

#[test]
fn a_responses_object_gives_its_output_usage_and_an_incomplete_status_with_its_reason() {
    let a = whole(
        Endpoint::Responses,
        r#"{"id":"resp_1","object":"response","model":"gpt-5","status":"incomplete",
            "incomplete_details":{"reason":"max_output_tokens"},"error":null,
            "output":[
              {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Weighing"}]},
              {"type":"function_call","id":"fc_1","call_id":"call_z","name":"run","arguments":"{\"cmd\":\"ls\"}","status":"completed"},
              {"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"Done","annotations":[]}]}],
            "usage":{"input_tokens":80,"output_tokens":25,"total_tokens":105,
              "input_tokens_details":{"cached_tokens":64},
              "output_tokens_details":{"reasoning_tokens":10}},
            "reasoning":{"effort":"low"}}"#,
    );
    assert!(a.ended());
    assert_eq!(a.stream_error(), None, "a null error is none");
    let t = a.finish(false);
    assert_eq!(t.model.as_deref(), Some("gpt-5"));
    assert_eq!(
        t.stop_reason.as_deref(),
        Some("incomplete: max_output_tokens")
    );
    assert_eq!(usage_of(&t), [Some(16), Some(25), Some(64), None, Some(10)]);
    assert_eq!(
        blocks(&t),
        json!([
            {"type": "thinking", "thinking": "Weighing"},
            {"type": "tool_use", "id": "call_z", "name": "run", "input": {"cmd": "ls"}},
            {"type": "text", "text": "Done"}
        ])
    );
}

#[test]
fn a_responses_stream_assembles_a_function_call_from_its_events() {
    let (a, added) = streamed(
        Endpoint::Responses,
        &[
            (
                "response.created",
                r#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_2","model":"gpt-5-mini","status":"in_progress","output":[]}}"#,
            ),
            (
                "response.output_item.added",
                r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_q","name":"grep","arguments":""}}"#,
            ),
            (
                "response.function_call_arguments.delta",
                r#"{"type":"response.function_call_arguments.delta","output_index":0,"delta":"{\"pattern\":"}"#,
            ),
            (
                "response.function_call_arguments.delta",
                r#"{"type":"response.function_call_arguments.delta","output_index":0,"delta":"\"fn\"}"}"#,
            ),
            (
                "response.some_future_event",
                r#"{"type":"response.some_future_event","output_index":0}"#,
            ),
        ],
    );
    assert_eq!(added, [false, false, true, true, false]);
    assert!(!a.complete(), "no response.completed yet");
    let t = a.finish(true);
    assert_eq!(t.model.as_deref(), Some("gpt-5-mini"));
    assert_eq!(t.stop_reason.as_deref(), Some("truncated"));
    assert_eq!(
        blocks(&t),
        json!([{"type": "tool_use", "id": "call_q", "name": "grep", "input": {"pattern": "fn"}}])
    );
}

#[test]
fn a_responses_item_done_replaces_the_deltas_of_its_item() {
    let (a, _) = streamed(
        Endpoint::Responses,
        &[
            (
                "response.output_text.delta",
                r#"{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"Hel"}"#,
            ),
            (
                "response.output_item.done",
                r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hello"}]}}"#,
            ),
        ],
    );
    let t = a.finish(true);
    assert_eq!(blocks(&t), json!([{"type": "text", "text": "Hello"}]));
}

#[test]
fn a_failed_response_and_an_error_event_are_the_streams_error() {
    let (a, _) = streamed(
        Endpoint::Responses,
        &[(
            "response.failed",
            r#"{"type":"response.failed","response":{"model":"gpt-5","status":"failed","output":[],"error":{"code":"server_error","message":"boom"}}}"#,
        )],
    );
    assert!(a.ended());
    assert_eq!(a.stream_error(), Some("server_error: boom"));
    assert_eq!(a.finish(false).stop_reason.as_deref(), Some("failed"));

    let (a, _) = streamed(
        Endpoint::Responses,
        &[(
            "error",
            r#"{"type":"error","code":"rate_limit_exceeded","message":"slow down","param":null}"#,
        )],
    );
    // The event is the error: its `type` is the event's, the kind its `code`.
    assert_eq!(a.stream_error(), Some("rate_limit_exceeded: slow down"));
    assert!(!a.ended());
}

// --- Ollama ------------------------------------------------------------------------------

#[test]
fn an_ollama_stream_gives_its_content_tool_calls_done_reason_and_counts() {
    let mut a = Assembler::new(Endpoint::OllamaChat);
    let lines = [
        r#"{"model":"llama3.2","created_at":"t","message":{"role":"assistant","content":"","thinking":"hmm"},"done":false}"#,
        r#"{"model":"llama3.2","created_at":"t","message":{"role":"assistant","content":"Sure"},"done":false}"#,
        r#"{"model":"llama3.2","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"add","arguments":{"a":1,"b":2}}}]},"done":false}"#,
        r#"{"model":"llama3.2","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":5,"prompt_eval_count":26,"eval_count":9}"#,
    ];
    let added: Vec<bool> = lines.iter().map(|l| a.ndjson_line(l)).collect();
    assert_eq!(added, [true, true, true, false]);
    assert!(a.ended());
    let t = a.finish(false);
    assert_eq!(t.model.as_deref(), Some("llama3.2"));
    assert_eq!(t.stop_reason.as_deref(), Some("stop"));
    assert_eq!(usage_of(&t), [Some(26), Some(9), None, None, None]);
    assert_eq!(
        blocks(&t),
        json!([
            {"type": "thinking", "thinking": "hmm"},
            {"type": "text", "text": "Sure"},
            {"type": "tool_use", "id": "call_0", "name": "add", "input": {"a": 1, "b": 2}}
        ])
    );
}

#[test]
fn an_ollama_error_line_is_the_streams_error() {
    let mut a = Assembler::new(Endpoint::OllamaChat);
    assert!(!a.ndjson_line(r#"{"error":"model \"nope\" not found, try pulling it first"}"#));
    assert_eq!(
        a.stream_error(),
        Some("error: model \"nope\" not found, try pulling it first"),
        "a bare string error is its own message"
    );
    assert!(!a.complete());
}

// --- Usage ---------------------------------------------------------------------------------

#[test]
fn a_later_usage_report_keeps_what_an_earlier_one_gave_and_it_lacks() {
    let mut r = Reported::default();
    usage::read(
        Endpoint::Messages,
        &json!({"input_tokens": 10, "cache_read_input_tokens": 4, "output_tokens": 1}),
        &mut r,
    );
    usage::read(Endpoint::Messages, &json!({"output_tokens": 30}), &mut r);
    assert_eq!(
        r,
        Reported {
            input: Some(10),
            output: Some(30),
            cache_read: Some(4),
            cache_creation: None,
            reasoning: None,
        }
    );
    assert_eq!(
        usage::normalise(Endpoint::Messages, Reported::default()),
        None
    );
}

#[test]
fn openai_input_never_goes_below_zero_when_the_cache_count_is_larger() {
    let r = Reported {
        input: Some(5),
        cache_read: Some(8),
        ..Reported::default()
    };
    let u = usage::normalise(Endpoint::ChatCompletions, r).unwrap();
    assert_eq!(u.input_tokens, Some(0));
    // Anthropic's input excludes the cache already: nothing is taken off.
    let u = usage::normalise(Endpoint::Messages, r).unwrap();
    assert_eq!(u.input_tokens, Some(5));
}
