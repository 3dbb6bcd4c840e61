#!/usr/bin/env python3
"""Byte-level stdio tap for reel's interop tests.

    python tee.py PREFIX -- CMD [ARGS...]

Starts CMD and copies bytes both ways without looking at them: our stdin to CMD's
stdin (also appended to PREFIX.c2s) and CMD's stdout to our stdout (also appended to
PREFIX.s2c). CMD's stderr is inherited. When our stdin ends, CMD's stdin is closed;
we exit with CMD's status. Placed on both sides of `reel rec`, the two captures show
whether the client and the server saw the same bytes.
"""
import os
import subprocess
import sys
import threading

CHUNK = 65536


def copy(src_fd: int, dst_fd: int, log_path: str, close_dst: bool) -> None:
    with open(log_path, "wb", buffering=0) as log:
        while True:
            try:
                data = os.read(src_fd, CHUNK)
            except OSError:
                data = b""
            if not data:
                break
            log.write(data)
            try:
                view = memoryview(data)
                while view:
                    n = os.write(dst_fd, view)
                    view = view[n:]
            except OSError:
                pass  # the reader went away; keep capturing what the source says
    if close_dst:
        os.close(dst_fd)


def main() -> int:
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.stderr.write(__doc__)
        return 64
    prefix, cmd = sys.argv[1], sys.argv[3:]
    child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    to_child = threading.Thread(
        target=copy, args=(sys.stdin.fileno(), child.stdin.fileno(), prefix + ".c2s", True), daemon=True
    )
    from_child = threading.Thread(
        target=copy, args=(child.stdout.fileno(), sys.stdout.fileno(), prefix + ".s2c", False)
    )
    to_child.start()
    from_child.start()
    from_child.join()
    code = child.wait()
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
