#!/usr/bin/env python3
"""Splices `reel rec --url` between a conformance client and the suite's test server.

    conformance client --command "python conformance_via_rec.py REEL TRACE_DIR CLIENT..." ...
    # the suite runs:  python conformance_via_rec.py REEL TRACE_DIR CLIENT... SERVER_URL

It starts `REEL rec --url SERVER_URL --listen 127.0.0.1:0 --dir TRACE_DIR --name SCENARIO`,
waits for the `listening on http://HOST:PORT…` line on reel's stderr, runs
`CLIENT... http://HOST:PORT<path of SERVER_URL>` (reel proxies the whole upstream origin, so
the path is kept), then stops reel with SIGTERM so it closes its trace. reel's stderr is
passed through to ours.

Exit status: the client's when it failed; otherwise 1 if reel could not start or did not
end cleanly, else 0. Limits: reel must announce its address within `START_LIMIT` seconds
and end within `STOP_LIMIT` seconds of SIGTERM (then it is killed).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from urllib.parse import urlsplit

START_LIMIT = 20
STOP_LIMIT = 20
LISTENING = re.compile(r"listening on (https?://[^/\s]+)")


def main() -> int:
    if len(sys.argv) < 5:
        print("usage: conformance_via_rec.py REEL TRACE_DIR CLIENT... SERVER_URL", file=sys.stderr)
        return 2
    reel, trace_dir, client, server_url = sys.argv[1], sys.argv[2], sys.argv[3:-1], sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "conformance").replace("/", "-")
    rec = subprocess.Popen(
        [reel, "rec", "--url", server_url, "--listen", "127.0.0.1:0", "--dir", trace_dir, "--name", scenario],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    origin: list[str] = []
    announced = threading.Event()

    def pump() -> None:
        assert rec.stderr is not None
        for line in rec.stderr:
            sys.stderr.write(line)
            found = LISTENING.search(line)
            if found and not origin:
                origin.append(found.group(1))
                announced.set()
        announced.set()

    threading.Thread(target=pump, daemon=True).start()
    if not announced.wait(START_LIMIT) or not origin:
        print(f"conformance_via_rec: reel rec did not announce its address (exit {rec.poll()})", file=sys.stderr)
        rec.kill()
        rec.wait()
        return 1

    upstream = urlsplit(server_url)
    proxied = origin[0] + (upstream.path or "") + (f"?{upstream.query}" if upstream.query else "")
    code = subprocess.call([*client, proxied])

    rec.send_signal(signal.SIGTERM)
    try:
        rec_code = rec.wait(STOP_LIMIT)
    except subprocess.TimeoutExpired:
        rec.kill()
        rec.wait()
        print("conformance_via_rec: reel rec did not end after SIGTERM", file=sys.stderr)
        return code or 1
    if code == 0 and rec_code != 0:
        print(f"conformance_via_rec: reel rec exited with {rec_code}", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
