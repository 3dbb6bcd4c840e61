"""What the MCP and LLM fixtures share: finding the `reel` binary, the record modes,
tape names, and the tapes directory as `reel ls --json` sees it.

A tape is a run in the tapes directory whose label is the tape's name (`reel rec --name
NAME` writes `DIR/<timestamp>-NAME.jsonl`); the newest such run of the right kind (`mcp`
or `llm`) is the tape. Tapes are always handed to reel by absolute path, never by name,
so a file that happens to share the name in the client's working directory cannot be
picked up instead.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

RECORD_MODES = ("none", "once", "new_episodes", "all")
DEFAULT_RECORD_MODE = "once"


class ReelError(Exception):
    """Something about reel or a tape that the user has to fix."""


def find_reel(option: str | None = None) -> str:
    """The absolute path of the reel binary: `--reel-bin` (`option`), else `$REEL_BIN`,
    else the `reel` the `reel-cli` distribution installed into this environment, else
    `reel` on PATH."""
    for source, value in (("--reel-bin", option), ("REEL_BIN", os.environ.get("REEL_BIN"))):
        if value:
            found = shutil.which(value)
            if found is None:
                raise ReelError(
                    f"reel not found: {source} names {value!r}, which is not an executable file"
                )
            return os.path.abspath(found)
    found = installed_reel() or shutil.which("reel")
    if found is None:
        raise ReelError(
            "reel not found: the `reel-cli` distribution, which installs it, is not in this "
            f"environment ({sys.prefix}) and there is no `reel` on PATH; install it with "
            "`pip install reel-cli` (a dependency of pytest-reel), or point pytest at a reel "
            "binary with --reel-bin PATH or REEL_BIN=PATH"
        )
    return os.path.abspath(found)


_REEL_SCRIPT = "reel.exe" if os.name == "nt" else "reel"


def installed_reel() -> str | None:
    """The `reel` script of the `reel-cli` distribution, when it is installed where this
    interpreter imports from: the file its metadata lists, else the scripts directory of
    this environment (an install whose metadata lists no files)."""
    try:
        dist = metadata.distribution("reel-cli")
    except metadata.PackageNotFoundError:
        return None
    candidates = [
        Path(dist.locate_file(f))
        for f in dist.files or []
        if f.name == _REEL_SCRIPT and f.parent.name in ("bin", "Scripts")
    ]
    candidates += [Path(sysconfig.get_path("scripts")) / _REEL_SCRIPT]
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return os.path.abspath(path)
    return None


def check_mode(mode: str, source: str) -> str:
    if mode not in RECORD_MODES:
        raise ReelError(
            f"{source}: unknown record mode {mode!r}; one of {', '.join(RECORD_MODES)}"
        )
    return mode


_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def name_from_nodeid(nodeid: str) -> str:
    """A tape name from a test's node id: `tests/test_a.py::TestB::test_c[x-1]` becomes
    `test_a-TestB-test_c-x-1`. Only letters, digits, `_`, `.` and `-` stay (reel reads
    `/` as a path and `~N` as an older run); the directory part is dropped, since the
    tapes live beside the test file."""
    path, _, rest = nodeid.partition("::")
    stem = Path(path).name
    if stem.endswith(".py"):
        stem = stem[:-3]
    name = _UNSAFE.sub("-", f"{stem}::{rest}" if rest else stem).strip("-.")
    if name.endswith(".jsonl"):
        name = name[: -len(".jsonl")]
    return name or "tape"


def check_name(name: str) -> str:
    if not name or _UNSAFE.search(name) or name.startswith((".", "-")) or name.endswith(".jsonl"):
        raise ReelError(
            f"tape name {name!r}: use letters, digits, `_`, `.` and `-` only (not starting "
            "with `.` or `-`, not ending in `.jsonl`)"
        )
    return name


@dataclass
class Run:
    """One run as `reel ls --json` lists it."""

    path: Path
    files: list[Path]
    label: str
    kind: str
    started_at: str


def list_runs(reel: str, tapes: Path) -> list[Run]:
    """The runs in `tapes`, newest first (none when it does not exist yet)."""
    if not tapes.is_dir():
        return []
    done = subprocess.run(
        [reel, "ls", "--json", "--color", "never", "--dir", str(tapes)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if done.returncode != 0:
        raise ReelError(
            f"`reel ls --dir {tapes}` failed (exit {done.returncode}):\n{done.stderr}"
        )
    try:
        doc = json.loads(done.stdout)
        runs = [
            Run(
                path=_absolute(tapes, r["path"]),
                files=[_absolute(tapes, f) for f in r.get("files") or [r["path"]]],
                label=r.get("label") or "",
                kind=r.get("kind") or "",
                started_at=r.get("startedAt") or "",
            )
            for r in doc["runs"]
        ]
    except (ValueError, KeyError, TypeError) as e:
        raise ReelError(f"`reel ls --json --dir {tapes}` printed what this plugin cannot read: {e}")
    return runs


def _absolute(tapes: Path, path: str) -> Path:
    # reel names files the way the directory was given; it is given absolute.
    p = Path(path)
    return p if p.is_absolute() else Path.cwd() / p


def find_tape(reel: str, tapes: Path, name: str, kind: str) -> Run | None:
    """The newest run labelled `name` of this kind, if any."""
    for run in list_runs(reel, tapes):
        if run.label == name and run.kind == kind:
            return run
    return None


def remove_older(reel: str, tapes: Path, name: str, kind: str, keep: Path) -> None:
    """Removes every run labelled `name` of this kind but `keep`: a re-recorded tape
    replaces the old one, as a re-recorded cassette does."""
    for run in list_runs(reel, tapes):
        if run.label == name and run.kind == kind and run.path != keep:
            for f in run.files:
                f.unlink(missing_ok=True)


def how_to_record(nodeid: str) -> str:
    return (
        f"record it with `pytest --reel-record-mode=once {nodeid}` (records the missing tape), "
        f"or `pytest --reel-record {nodeid}` (records it again)"
    )
