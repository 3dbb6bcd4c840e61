#!/usr/bin/env python3
"""A raw HTTP client of the model APIs that hangs up as soon as it has the answer, the
way litellm's Anthropic handler and hand-written agents do: it reads a streamed
response event by event and closes the connection right after the event it stops at,
never reading the rest (the end marker, the closing chunk).

    python llm_hangup_client.py --url BASE --api anthropic|chat|responses \
        --stop content|end [--model M[,M…]] [--runs N]

`--stop content`: after the last event with content (Anthropic `message_delta` with the
stop reason and usage; a chat chunk with `finish_reason`, or the usage chunk after it;
Responses `response.completed`). `--stop end`: after the end marker (`message_stop`,
`data: [DONE]`, `response.completed`). Each run asks every model in turn, each on a new
connection. Prints one JSON line per request: {"model", "events": N, "stop_reason"}.
Standard library only.
"""
import argparse
import http.client
import json
import sys
import urllib.parse

PATHS = {"anthropic": "/v1/messages", "chat": "/v1/chat/completions",
         "responses": "/v1/responses"}


def request(api, model):
    if api == "anthropic":
        return {"model": model, "max_tokens": 64, "stream": True,
                "messages": [{"role": "user", "content": "Say hello."}]}
    if api == "chat":
        return {"model": model, "stream": True, "stream_options": {"include_usage": True},
                "messages": [{"role": "user", "content": "Say hello."}]}
    return {"model": model, "stream": True, "input": "Say hello."}


def events(response):
    """(event type, data) per SSE event, read line by line off the response."""
    kind, data = "", []
    while True:
        line = response.fp.readline()
        if not line:
            return
        line = line.decode().rstrip("\r\n")
        if line == "":
            if data:
                yield kind, "\n".join(data)
            kind, data = "", []
        elif line.startswith("event:"):
            kind = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())


def stops(api, stop, kind, data, state):
    """Whether to hang up after this event; notes the stop reason in `state`."""
    if data == "[DONE]":
        return True
    v = json.loads(data)
    if api == "anthropic":
        if v.get("type") == "message_delta":
            state["stop_reason"] = v["delta"].get("stop_reason")
            return stop == "content"
        return v.get("type") == "message_stop"
    if api == "chat":
        choices = v.get("choices") or []
        if choices and choices[0].get("finish_reason"):
            state["stop_reason"] = choices[0]["finish_reason"]
        return stop == "content" and v.get("usage") is not None and "stop_reason" in state
    if v.get("type") == "response.completed":
        state["stop_reason"] = v["response"]["status"]
        return True
    return False


def run(url, api, model, stop):
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    body = json.dumps(request(api, model))
    headers = {"content-type": "application/json", "authorization": "Bearer sk-test-reel",
               "x-api-key": "sk-ant-test-reel", "anthropic-version": "2023-06-01"}
    conn.request("POST", u.path.rstrip("/") + PATHS[api], body, headers)
    response = conn.getresponse()
    state, n = {}, 0
    for kind, data in events(response):
        n += 1
        if stops(api, stop, kind, data, state):
            break
    # Hang up now: whatever follows (the end marker, the closing chunk) is never read.
    conn.sock.close()
    conn.close()
    return {"model": model, "events": n, "stop_reason": state.get("stop_reason")}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--api", choices=sorted(PATHS), required=True)
    p.add_argument("--stop", choices=["content", "end"], required=True)
    p.add_argument("--model", default="reel-text")
    p.add_argument("--runs", type=int, default=1)
    a = p.parse_args()
    for _ in range(a.runs):
        for model in a.model.split(","):
            print(json.dumps(run(a.url, a.api, model, a.stop)), flush=True)


if __name__ == "__main__":
    sys.exit(main())
