"""An MCP server over stdio as a test sees it: a command line for the client to start,
which is the live server under `reel rec` when recording and `reel play` when replaying.

The plugin never talks to the server itself: the client under test starts the command
and closes it. What reel thought of the session arrives afterwards: `reel play --report
FILE` writes a JSON document (format `reel-play-report/1`) when play ends, and a
recording is a new run in the tapes directory. `McpTape.finish` turns either into a
verdict for the test.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

from .tapes import ReelError, Run, find_tape, how_to_record, list_runs, remove_older

REPORT_FORMAT = "reel-play-report/1"


class McpTape:
    """One tape of one test: the command line the MCP client is to start.

    `mode` is what this run does: `"replay"` (`reel play`, offline), `"record"` (`reel
    rec` around the live server) or `"new_episodes"` (`reel play --subset`: the tools
    the tape holds calls of from the tape, everything else live, the run becoming the
    new tape). `record_mode` is the configured vcrpy-style mode that chose it.
    """

    def __init__(
        self,
        *,
        reel: str,
        name: str,
        tapes: Path,
        record_mode: str,
        server: list[str] | None,
        nodeid: str,
        workdir: Path,
        env: dict[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
    ) -> None:
        self.reel = reel
        self.name = name
        self.tapes = tapes
        self.record_mode = record_mode
        self.nodeid = nodeid
        self.env = env
        self.cwd = cwd
        self.report_path = workdir / "play-report.json"
        self._workdir = workdir
        self._finished = False
        self.report: dict | None = None
        self.tape: Run | None = find_tape(reel, tapes, name, "mcp")
        self.mode = _choose(record_mode, self.tape is not None)
        if self.mode == "none":
            raise ReelError(
                f"no MCP tape `{name}` in {tapes} and the record mode is `none`: "
                + how_to_record(nodeid)
            )
        if self.mode != "replay" and not server:
            raise ReelError(
                f"the tape `{name}` is to be recorded (record mode `{record_mode}`), but no live "
                "server is given: @pytest.mark.reel(server=[\"cmd\", \"arg\", ...]) or "
                "reel_mcp_factory(server=[...])"
            )
        live = _absolute_command(server) if self.mode != "replay" else []
        self._tools: list[str] = []
        if self.mode == "new_episodes":
            assert self.tape is not None
            self._tools = tools_called(self.tape.path)
            if not self._tools:
                # Nothing on the tape that --subset could serve: every call is new.
                self.mode = "record"
        self._runs_before = {r.path for r in list_runs(reel, tapes)}
        if self.mode == "replay":
            assert self.tape is not None
            self.argv = [reel, "play", str(self.tape.path), "--color", "never",
                         "--report", str(self.report_path)]
        elif self.mode == "record":
            tapes.mkdir(parents=True, exist_ok=True)
            self.argv = [reel, "rec", "--color", "never", "--dir", str(tapes), "--name", name,
                         "--", *live]
        else:
            assert self.tape is not None
            self._recorded_dir = workdir / "new-episodes"
            self.argv = [reel, "play", str(self.tape.path), "--color", "never",
                         "--subset", ",".join(self._tools),
                         "--record", str(self._recorded_dir),
                         "--report", str(self.report_path), "--", *live]

    @property
    def command(self) -> str:
        """The program the client starts (the absolute path of reel)."""
        return self.argv[0]

    @property
    def args(self) -> list[str]:
        """Its arguments."""
        return self.argv[1:]

    @property
    def params(self):
        """The command as `mcp.StdioServerParameters`, for `mcp.client.stdio.stdio_client`."""
        try:
            from mcp import StdioServerParameters
        except ImportError as e:
            raise ReelError(
                "McpTape.params needs the `mcp` package (pip install mcp); other clients take "
                "McpTape.command and McpTape.args"
            ) from e
        kwargs = {"command": self.command, "args": self.args}
        if self.env is not None:
            kwargs["env"] = self.env
        if self.cwd is not None:
            kwargs["cwd"] = self.cwd
        return StdioServerParameters(**kwargs)

    def __repr__(self) -> str:
        return f"McpTape(name={self.name!r}, mode={self.mode!r}, argv={self.argv!r})"

    # ---- the verdict ----------------------------------------------------------------

    def finish(self, wait: float, final: bool) -> str | None:
        """Judges the session: a failure text, or None when it was clean. Waits up to
        `wait` seconds for reel to finish; when it has not and this is not `final`, the
        judgement is left for later (returns None and stays unfinished)."""
        if self._finished:
            return None
        if self.mode == "record":
            failure = self._finish_record(wait, final)
        else:
            failure = self._finish_play(wait, final)
        return failure

    def abandon(self) -> None:
        """Gives up judging (the test did not get to start the server)."""
        self._finished = True

    def _finish_record(self, wait: float, final: bool) -> str | None:
        deadline = time.monotonic() + wait
        while True:
            new = find_tape(self.reel, self.tapes, self.name, "mcp")
            if new is not None and new.path not in self._runs_before:
                break
            if time.monotonic() >= deadline:
                if not final:
                    return None
                self._finished = True
                return (
                    f"reel rec: recording the tape `{self.name}` into {self.tapes}, but no "
                    "recording appeared: the client never started the server command "
                    f"{self.argv!r}"
                )
            time.sleep(0.05)
        self._finished = True
        remove_older(self.reel, self.tapes, self.name, "mcp", keep=new.path)
        self.tape = new
        return None

    def _finish_play(self, wait: float, final: bool) -> str | None:
        report = _wait_for_report(self.report_path, wait)
        if report is None:
            if not final:
                return None
            self._finished = True
            return (
                f"reel play: no report from the tape `{self.name}` within {wait:g} s "
                f"({self.report_path}): the client never started {self.argv!r}, or never "
                "closed it (reel play reports when the client closes its stdin)"
            )
        self._finished = True
        self.report = report
        if report.get("format") != REPORT_FORMAT:
            return f"reel play wrote a report of an unknown format: {report.get('format')!r}"
        verdict = report.get("verdict")
        if verdict == "clean":
            if self.mode == "new_episodes":
                return self._adopt_new_episodes(report)
            return None
        return self._failure_text(report)

    def _failure_text(self, report: dict) -> str:
        what = {
            "misses": "requests the tape has no answer for",
            "client-drift": "the client answered the server's requests differently than recorded",
            "usage": "reel play refused its command line",
            "error": "reel play failed",
        }.get(report.get("verdict"), "an unknown verdict")
        tape = self.tape.path if self.tape else "?"
        lines = [
            f"reel play: the MCP tape `{self.name}` did not replay cleanly: {what} "
            f"(verdict {report.get('verdict')}, exit {report.get('exit')})",
            f"tape: {tape}",
        ]
        if report.get("error"):
            lines.append(f"error: {report['error']}")
        stderr = (report.get("stderr") or "").rstrip()
        if stderr:
            lines.append(stderr)
        if self.mode == "new_episodes":
            lines.append(
                "record mode new_episodes answers calls of the tools the tape holds "
                f"({', '.join(self._tools)}) from the tape only: a call of one of them that was "
                f"not recorded is a miss. Record the tape again: pytest --reel-record {self.nodeid}"
            )
        else:
            lines.append(
                "If the change is intended, record the tape again: "
                f"pytest --reel-record {self.nodeid}"
            )
        return "\n".join(lines)

    def _adopt_new_episodes(self, report: dict) -> str | None:
        recorded = (report.get("summary") or {}).get("recorded")
        if not recorded or not Path(recorded).is_file():
            return (
                f"reel play --record: the new-episodes run of the tape `{self.name}` was not "
                f"recorded (report: {json.dumps(report.get('summary'))})"
            )
        adopted = relabel(Path(recorded), self.name, self.tapes)
        remove_older(self.reel, self.tapes, self.name, "mcp", keep=adopted)
        shutil.rmtree(self._recorded_dir, ignore_errors=True)
        self.tape = find_tape(self.reel, self.tapes, self.name, "mcp")
        return None


def _choose(record_mode: str, exists: bool) -> str:
    if record_mode == "all":
        return "record"
    if record_mode == "new_episodes":
        return "new_episodes" if exists else "record"
    if exists:
        return "replay"
    return "record" if record_mode == "once" else "none"


def _absolute_command(server: list[str]) -> list[str]:
    if isinstance(server, (str, bytes)) or not all(isinstance(a, str) for a in server):
        raise ReelError(f"server: a list of strings, e.g. [\"node\", \"server.js\"] (got {server!r})")
    program = server[0]
    found = shutil.which(program)
    if found is None:
        raise ReelError(
            f"the live server {program!r} is not an executable file or on PATH; it is needed to "
            "record the tape"
        )
    return [os.path.abspath(found), *server[1:]]


def _wait_for_report(path: Path, wait: float) -> dict | None:
    deadline = time.monotonic() + wait
    while True:
        try:
            # Written whole (a temporary file renamed), so a file that exists is complete.
            return json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            pass
        except ValueError as e:
            return {"format": REPORT_FORMAT, "verdict": "error", "exit": None,
                    "error": f"the report {path} is not JSON: {e}", "stderr": ""}
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.05)


def tools_called(trace: Path) -> list[str]:
    """The names of the tools the client called on a tape (its `tools/call` requests)."""
    names: list[str] = []
    with trace.open("rb") as f:
        for line in f:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if not isinstance(rec, dict) or rec.get("dir") != "in":
                continue
            raw = rec.get("raw")
            for msg in raw if isinstance(raw, list) else [raw]:
                if isinstance(msg, dict) and msg.get("method") == "tools/call":
                    name = (msg.get("params") or {}).get("name")
                    if isinstance(name, str) and name not in names:
                        names.append(name)
    return sorted(names)


def relabel(recorded: Path, name: str, tapes: Path) -> Path:
    """Moves a `reel play --record` trace into `tapes` as the run `name`: its meta line
    gets the label, every other line stays byte for byte."""
    data = recorded.read_bytes()
    first, sep, rest = data.partition(b"\n")
    meta = json.loads(first)
    old_label = meta.get("label") or ""
    meta["label"] = name
    stem = recorded.name
    suffix = f"-{old_label}.jsonl"
    stamp = stem[: -len(suffix)] if old_label and stem.endswith(suffix) else stem[: -len(".jsonl")]
    tapes.mkdir(parents=True, exist_ok=True)
    target = tapes / f"{stamp}-{name}.jsonl"
    tmp = tapes / f".{target.name}.tmp"
    tmp.write_bytes(json.dumps(meta, ensure_ascii=False, separators=(",", ":")).encode() + sep + rest)
    os.replace(tmp, target)
    recorded.unlink(missing_ok=True)
    return target
