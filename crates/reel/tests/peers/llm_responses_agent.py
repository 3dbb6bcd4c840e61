#!/usr/bin/env python3
"""A Responses API agent shaped like OpenAI's Codex CLI, for `reel llm --play`'s tests:
every run sends per-run identities the way Codex does — `client_metadata` with fresh
session, thread and turn ids, and fresh `id`s on the input items it sends and re-sends —
so two honest runs never send the same bytes.

    python llm_responses_agent.py --base URL [--model reel-tool] [--stream] [--tool-output T]

Round 1 asks for the weather with a `get_weather` tool; when the answer is a
`function_call`, round 2 re-sends the whole conversation (the user message, the call,
its output, "sunny, 21 C" or `--tool-output`) and prints the final text. Prints ONE JSON line
{"text", "rounds"}. Standard library only.
"""
import argparse
import json
import sys
import urllib.error
import urllib.request
import uuid

TOOL = {"type": "function", "name": "get_weather", "description": "Weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"]}}


def fresh(prefix):
    return f"{prefix}_{uuid.uuid4().hex}"


def post(base, body):
    req = urllib.request.Request(base + "/v1/responses", json.dumps(body).encode(),
                                 {"content-type": "application/json",
                                  "authorization": "Bearer sk-test-reel"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            text = r.read().decode()
    except urllib.error.HTTPError as e:
        print(json.dumps({"error": {"status": e.code, "body": e.read().decode()}}))
        sys.exit(3)
    if body.get("stream"):
        for line in text.splitlines():
            if line.startswith("data: "):
                ev = json.loads(line[6:])
                if ev.get("type") == "response.completed":
                    return ev["response"]
        raise RuntimeError("no response.completed")
    return json.loads(text)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--base", required=True)
    p.add_argument("--model", default="reel-tool")
    p.add_argument("--stream", action="store_true")
    p.add_argument("--tool-output", default="sunny, 21 C")
    a = p.parse_args()
    session = fresh("sess")
    user = {"type": "message", "role": "user", "id": fresh("msg"),
            "content": [{"type": "input_text", "text": "What is the weather in Paris?"}]}
    inputs = [user]
    rounds, text = 0, ""
    while rounds < 4:
        rounds += 1
        body = {"model": a.model, "input": inputs, "tools": [TOOL], "stream": a.stream,
                "client_metadata": {"session_id": session, "thread_id": fresh("thr"),
                                    "turn_id": fresh("turn")}}
        out = post(a.base, body)
        calls = [i for i in out["output"] if i.get("type") == "function_call"]
        if not calls:
            text = "".join(c.get("text", "") for i in out["output"] if i.get("type") == "message"
                           for c in i.get("content", []))
            break
        for c in calls:
            # The call re-sent under an id of this run's, and its output.
            inputs = inputs + [dict(c, id=fresh("fc")),
                               {"type": "function_call_output", "id": fresh("fco"),
                                "call_id": c["call_id"], "output": a.tool_output}]
    print(json.dumps({"text": text, "rounds": rounds}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
