#!/usr/bin/env python3
"""A client of the model APIs through litellm (`litellm.completion`), for `reel llm`'s
tests: litellm's own Anthropic and OpenAI handlers, not the official SDKs' stream code.

    python llm_litellm_client.py --base URL --api anthropic|chat --mode stream|plain \
        [--model M[,M…]] [--runs N]

`--base` is where reel listens (litellm gets `URL` for Anthropic, `URL/v1` for OpenAI).
Each run asks every model in turn. Prints one JSON line per request:
{"model", "text", "finish_reason"}; on an exception
{"error": {"class", "message"}} and exits 3. No retries; the model price map is the one
litellm ships (no download).
"""
import argparse
import json
import os
import sys

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

import litellm  # noqa: E402

litellm.suppress_debug_info = True


def once(a, model):
    provider = "anthropic" if a.api == "anthropic" else "openai"
    base = a.base if a.api == "anthropic" else a.base + "/v1"
    r = litellm.completion(model=f"{provider}/{model}", api_base=base,
                           api_key="sk-test-reel-0000000000000000", max_tokens=64,
                           messages=[{"role": "user", "content": "Say hello."}],
                           stream=a.mode == "stream", num_retries=0)
    if a.mode == "stream":
        text, finish = "", None
        for chunk in r:
            choice = chunk.choices[0]
            text += choice.delta.content or ""
            finish = choice.finish_reason or finish
        return {"model": model, "text": text, "finish_reason": finish}
    return {"model": model, "text": r.choices[0].message.content,
            "finish_reason": r.choices[0].finish_reason}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--base", required=True)
    p.add_argument("--api", choices=["anthropic", "chat"], required=True)
    p.add_argument("--mode", choices=["stream", "plain"], required=True)
    p.add_argument("--model", default="reel-text")
    p.add_argument("--runs", type=int, default=1)
    a = p.parse_args()
    for _ in range(a.runs):
        for model in a.model.split(","):
            try:
                out = once(a, model)
            except Exception as e:  # noqa: BLE001 - reported to the test
                print(json.dumps({"error": {"class": type(e).__name__, "message": str(e)}}))
                return 3
            print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
