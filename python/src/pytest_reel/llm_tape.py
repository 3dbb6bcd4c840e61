"""A model API for a test: `reel llm` on a loopback port, serving a tape (`--play`) or
recording the calls it forwards to an upstream.

Unlike an MCP server, the plugin starts this one itself, reads the address reel prints
(`reel: listening on http://127.0.0.1:PORT`) and stops it with SIGINT when the test is
done; reel then exits 3 when it answered a request with a miss, and its stderr names the
request and the nearest recorded one.
"""

from __future__ import annotations

import re
import signal
import subprocess
import time
from pathlib import Path

from .tapes import ReelError, Run, find_tape, how_to_record, remove_older

_LISTENING = re.compile(r"reel: listening on (http://\S+)")
START_TIMEOUT = 10.0


class LlmTape:
    """A running `reel llm`. `base_url` is for the `anthropic` SDK
    (`Anthropic(base_url=...)`), `openai_base_url` (`base_url + "/v1"`) for the `openai`
    SDK; `str(tape)` is `base_url`. `mode` is `"replay"` or `"record"`."""

    def __init__(
        self,
        *,
        reel: str,
        name: str,
        tapes: Path,
        record_mode: str,
        upstream: str | None,
        nodeid: str,
        workdir: Path,
    ) -> None:
        self.reel = reel
        self.name = name
        self.tapes = tapes
        self.record_mode = record_mode
        self.upstream = upstream
        self.nodeid = nodeid
        self.tape: Run | None = find_tape(reel, tapes, name, "llm")
        exists = self.tape is not None
        if record_mode == "all" or (not exists and record_mode in ("once", "new_episodes")):
            self.mode = "record"
        elif exists:
            self.mode = "replay"
        else:
            raise ReelError(
                f"no LLM tape `{name}` in {tapes} and the record mode is `none`: "
                + how_to_record(nodeid)
            )
        if self.mode == "replay":
            assert self.tape is not None
            argv = [reel, "llm", "--color", "never", "--play", str(self.tape.path)]
        else:
            tapes.mkdir(parents=True, exist_ok=True)
            argv = [reel, "llm", "--color", "never", "--dir", str(tapes), "--name", name]
            if upstream:
                argv += ["--upstream", upstream]
        self.argv = argv
        self._stderr_path = workdir / "llm-stderr.txt"
        self._stderr = self._stderr_path.open("wb")
        self._proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._stderr
        )
        self._finished = False
        self.base_url = self._wait_listening()
        self.anthropic_base_url = self.base_url
        self.openai_base_url = self.base_url + "/v1"

    def __str__(self) -> str:
        return self.base_url

    def __repr__(self) -> str:
        return f"LlmTape(name={self.name!r}, mode={self.mode!r}, base_url={self.base_url!r})"

    @property
    def stderr(self) -> str:
        """What reel printed on stderr so far."""
        return self._stderr_path.read_text(encoding="utf-8", errors="replace")

    def _wait_listening(self) -> str:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            found = _LISTENING.search(self.stderr)
            if found:
                return found.group(1).rstrip("/")
            if self._proc.poll() is not None:
                self._close()
                raise ReelError(
                    f"`{' '.join(self.argv)}` exited with {self._proc.returncode} before it "
                    f"listened:\n{self.stderr}"
                )
            time.sleep(0.02)
        self._proc.kill()
        self._proc.wait()
        self._close()
        raise ReelError(
            f"`{' '.join(self.argv)}` did not print its address within {START_TIMEOUT:g} s:\n"
            f"{self.stderr}"
        )

    def finish(self, wait: float, final: bool) -> str | None:
        """Stops reel (SIGINT) and judges what it did: a failure text, or None."""
        del final  # the test is over whenever this is called: stop it now
        if self._finished:
            return None
        self._finished = True
        if self._proc.poll() is None:
            self._proc.send_signal(signal.SIGINT)
        try:
            code = self._proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
            self._close()
            return f"reel llm did not stop within {wait:g} s of SIGINT:\n{self.stderr}"
        self._close()
        stderr = self.stderr.rstrip()
        if code == 3:
            lines = [
                f"reel llm: the LLM tape `{self.name}` answered requests with a miss (exit 3)",
                f"tape: {self.tape.path if self.tape else '?'}",
                stderr,
            ]
            if self.record_mode == "new_episodes":
                lines.append(
                    "record mode new_episodes replays an LLM tape that exists (reel llm cannot "
                    "mix recorded and live calls)."
                )
            lines.append(
                f"If the change is intended, record the tape again: pytest --reel-record {self.nodeid}"
            )
            return "\n".join(lines)
        if code != 0:
            return f"`{' '.join(self.argv)}` exited with {code}:\n{stderr}"
        if self.mode == "record":
            new = find_tape(self.reel, self.tapes, self.name, "llm")
            if new is None:
                return f"reel llm recorded, but no tape `{self.name}` is in {self.tapes}:\n{stderr}"
            remove_older(self.reel, self.tapes, self.name, "llm", keep=new.path)
            self.tape = new
        return None

    def abandon(self) -> None:
        """Stops reel without judging (the test did not get to use it)."""
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        self._finished = True
        self._close()

    def _close(self) -> None:
        if not self._stderr.closed:
            self._stderr.close()
