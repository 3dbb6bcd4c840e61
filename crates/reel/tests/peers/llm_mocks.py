#!/usr/bin/env python3
"""Independent mock model servers for `reel llm`'s tests, scripted for llm_client's
scenarios (models `reel-text`, `reel-tool`, `reel-think`; any other model gets the
mock's default answer).

    python llm_mocks.py llmock [--port P] [--fault KIND] [--after-chunks N] [--times N]
                               [--stall-seconds S] [--chunk-delay-ms MS]
    python llm_mocks.py aimock [--port P] [ARGS for llm_aimock.mjs...]

Prints `listening on http://127.0.0.1:PORT` once the server answers (port 0, the
default, picks a free one), then serves until killed.

- `llmock` (PyPI llmock 0.2.2, run in this process on `.peers/llmock-venv/bin/python`):
  OpenAI chat and Responses under `/v1`, Anthropic under `/anthropic`, so the clients
  take `OPENAI_BASE_URL=http://127.0.0.1:PORT/v1` and
  `ANTHROPIC_BASE_URL=http://127.0.0.1:PORT/anthropic`. Text is scripted; `reel-tool`
  uses llmock's own agent behaviour (a request that offers a tool gets a call with
  arguments made from its schema, and text once the tool's result is in it); llmock
  has no thinking or reasoning, so `reel-think` gets plain text. `--fault` queues an
  llmock behaviour for the next `--times` (default 1) matching requests: `disconnect`,
  `truncate`, `stall`, `malformed` (streams only, after `--after-chunks` chunks), or an
  HTTP status such as `429` (with `Retry-After: 1`) or `529` (Anthropic's
  `overloaded_error`). More can be queued at run time with `POST /_llmock/scenario`.
- `aimock` (npm @copilotkit/aimock 1.43.0): replaced by `node llm_aimock.mjs ARGS...`,
  which see.
"""
import argparse
import json
import os
import socket
import sys
import threading
import time
import urllib.request

TEXT = "Hello from the mock model."
THINK_ANSWER = "17 * 23 = 391."


def llmock(args) -> None:
    os.environ.setdefault("LLMOCK_RESPONSE_STYLE", "static")
    os.environ.setdefault("LLMOCK_TOOL_MODE", "auto")
    if args.chunk_delay_ms:
        os.environ["LLMOCK_STREAM_CHUNK_DELAY_MS"] = str(args.chunk_delay_ms)
    import uvicorn
    from llmock.main import create_app

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"

    behaviors = [
        {"type": "reply", "text": TEXT, "times": None, "match": {"model": "reel-text"}},
        {"type": "reply", "text": THINK_ANSWER, "times": None, "match": {"model": "reel-think"}},
    ]
    if args.fault:
        if args.fault.isdigit():
            fault = {"type": "fail", "status": int(args.fault), "times": args.times}
            if args.fault == "429":
                fault["retry_after"] = 1
        else:
            fault = {
                "type": "stream_fault",
                "kind": args.fault,
                "after_chunks": args.after_chunks,
                "stall_seconds": args.stall_seconds,
                "times": args.times,
            }
        behaviors.append(fault)

    def script() -> None:
        deadline = time.monotonic() + 20
        while True:
            try:
                urllib.request.urlopen(f"{base}/health", timeout=2).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    print("llmock did not come up", file=sys.stderr, flush=True)
                    os._exit(1)
                time.sleep(0.05)
        req = urllib.request.Request(
            f"{base}/_llmock/scenario",
            data=json.dumps({"behaviors": behaviors}).encode(),
            headers={"content-type": "application/json"},
        )
        urllib.request.urlopen(req, timeout=5).read()
        print(f"listening on {base}", flush=True)

    threading.Thread(target=script, daemon=True).start()
    config = uvicorn.Config(create_app(), log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])


def aimock(rest) -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    cmd = ["node", os.path.join(here, "llm_aimock.mjs"), *rest]
    sys.stdout.flush()
    os.execvp(cmd[0], cmd)


def main() -> None:
    if sys.argv[1:2] == ["aimock"]:
        aimock(sys.argv[2:])
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mock", choices=["llmock"])
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--fault", help="disconnect|truncate|stall|malformed|<HTTP status>")
    p.add_argument("--after-chunks", type=int, default=2)
    p.add_argument("--times", type=int, default=1)
    p.add_argument("--stall-seconds", type=float, default=30.0)
    p.add_argument("--chunk-delay-ms", type=int, default=0)
    llmock(p.parse_args())


if __name__ == "__main__":
    main()
