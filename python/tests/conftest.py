"""Shared fixtures: the stand-in team program (the repository's load
generator, `loadgen`) and process checks.

The tests run against the installed package (its bundled server binary)
or, with ``$RCSS3D_BIN``, a development build. ``$RCSS3D_LOADGEN`` names
the load generator binary (built by ``cargo build -p rcss3d-tools --bin
loadgen``); without it the usual cargo target directories are searched,
and the tests that need it are skipped unless ``$RCSS3D_REQUIRE_LOADGEN``
is set (CI sets it: there a missing team program is a failure).
"""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import tempfile
import time
from pathlib import Path
from typing import Iterable, List, Optional

import pytest

REPO = Path(__file__).resolve().parents[2]

# Ray, for the batch tests, set before Ray is imported (it reads these at
# import): no usage report; token authentication with a token of this
# test session, not one written to ~/.ray.
_RAY_DIR = Path(tempfile.mkdtemp(prefix="rcss3d-ray-auth-"))
(_RAY_DIR / "auth_token").write_text(secrets.token_hex(32))
atexit.register(shutil.rmtree, _RAY_DIR, True)
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("RAY_AUTH_MODE", "token")
os.environ.setdefault("RAY_AUTH_TOKEN_PATH", str(_RAY_DIR / "auth_token"))


def _find_loadgen() -> Optional[Path]:
    env = os.environ.get("RCSS3D_LOADGEN")
    if env:
        return Path(env)
    targets = [os.environ.get("CARGO_TARGET_DIR"), str(REPO / "target")]
    for t in targets:
        if not t:
            continue
        for profile in ("release", "debug"):
            p = Path(t) / profile / "loadgen"
            if p.is_file():
                return p
    found = shutil.which("loadgen")
    return Path(found) if found else None


@pytest.fixture(scope="session")
def loadgen() -> Path:
    path = _find_loadgen()
    if path is None or not path.is_file():
        if os.environ.get("RCSS3D_REQUIRE_LOADGEN"):
            pytest.fail("no loadgen binary ($RCSS3D_LOADGEN)")
        pytest.skip("no loadgen binary: cargo build -p rcss3d-tools --bin loadgen, or set $RCSS3D_LOADGEN")
    return path


def teams_command(loadgen: Path, left: str, right: str, per_team: int) -> str:
    """Two scripted stand-in teams of ``per_team`` robots each (one load
    generator process plays both: its agents join the teams alternately),
    in sync mode, for a server's agent port (placeholders filled in by the
    runner)."""
    return (
        f"exec {loadgen} --agents {2 * per_team} --team-a {left} --team-b {right} --sync "
        "--host {host} --port {agent_port} --seconds 3600 --warmup 0 --timeout 30"
    )


def team_command(loadgen: Path, team: str, agents: int) -> str:
    """One scripted team of ``agents`` robots (at most 1: the load
    generator numbers two agents per team number)."""
    assert agents == 1
    return (
        f"exec {loadgen} --agents 1 --team-a {team} --team-b {team} --sync "
        "--host {host} --port {agent_port} --seconds 3600 --warmup 0 --timeout 30"
    )


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return False
    state = text[text.rfind(")") + 2 :].split()[0]
    return state not in ("Z", "X")


def wait_gone(pids: Iterable[int], within: float = 15.0) -> List[int]:
    """Waits until none of ``pids`` is alive; returns those still alive
    after ``within`` seconds."""
    pids = list(pids)
    deadline = time.monotonic() + within
    while True:
        left = [p for p in pids if alive(p)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)  # no event tells of another process's end


def group_members(pgid: int) -> List[int]:
    """Live processes of process group ``pgid``."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                text = f.read()
        except OSError:
            continue
        fields = text[text.rfind(")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            out.append(int(name))
    return out
