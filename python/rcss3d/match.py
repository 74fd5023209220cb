"""A match or a trial: a fresh server, the team or agent commands started
against it, a wall-clock limit, every process it started cleaned up, and
the results and the log.

Commands are shell command lines with placeholders filled in from the
server that was started: ``{host}``, ``{agent_port}``, ``{monitor_port}``,
``{seed}`` and ``{workdir}`` (write ``{{`` and ``}}`` for literal braces).
Each runs in its own process group (a new session), so a team's start
script and every agent it starts are stopped together: SIGTERM to the
group, then SIGKILL to what is left after ``grace`` seconds.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from .monitor import GameState, Monitor, MonitorError
from .server import PathLike, Results, Server

Commands = Union[str, Sequence[str]]


@dataclass
class CommandResult:
    """One command a match or trial started."""

    command: str
    """The command line as run (placeholders filled in)."""
    returncode: Optional[int]
    """Its exit status; negative: the signal that ended it (the runner
    stops commands still running at the end)."""
    output: Path
    """The file its stdout and stderr went to."""
    pid: int = 0
    """Its process id, also its process group's id."""


@dataclass
class MatchResult:
    """What a match or trial left."""

    results: Optional[Results]
    """The server's results (``None`` if the server had to be killed)."""
    log: Optional[Path]
    """The match log."""
    timed_out: bool
    """The wall-clock limit ended it."""
    wall_time: float
    """Seconds from the server's start to the end of the cleanup."""
    seed: Optional[int]
    """The run's seed (if the server never started: the one asked for, if
    any)."""
    workdir: Path
    """The directory with the log, the server's stderr and each command's
    output."""
    commands: List[CommandResult] = field(default_factory=list)
    value: Any = None
    """What a trial's ``trainer`` returned."""
    final_state: Optional[GameState] = None
    """The game as the runner's monitor last saw it."""

    def to_dict(self) -> Dict[str, Any]:
        """JSON-friendly summary (paths as strings)."""
        return {
            "results": self.results.to_dict() if self.results else None,
            "log": str(self.log) if self.log else None,
            "timed_out": self.timed_out,
            "wall_time": self.wall_time,
            "seed": self.seed,
            "workdir": str(self.workdir),
            "commands": [
                {
                    "command": c.command,
                    "returncode": c.returncode,
                    "output": str(c.output),
                    "pid": c.pid,
                }
                for c in self.commands
            ],
            "value": self.value,
        }


class _Group:
    """A command running in its own process group."""

    def __init__(self, command: str, output: Path, cwd: Optional[PathLike], env: Optional[Dict[str, str]]):
        self.command = command
        self.output = output
        self._out = open(output, "wb")
        self.proc = subprocess.Popen(
            command,
            shell=True,
            stdin=subprocess.DEVNULL,
            stdout=self._out,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=env,
            start_new_session=True,
            close_fds=True,
        )

    def stop(self, grace: float) -> CommandResult:
        """Stops the whole group: SIGTERM, then SIGKILL after ``grace``."""
        pgid = self.proc.pid
        _signal_group(pgid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
        # Members of the group may outlive its leader: make sure.
        if _group_alive(pgid):
            deadline = time.monotonic() + grace
            while _group_alive(pgid) and time.monotonic() < deadline:
                time.sleep(0.05)  # polling the group's members; no event exists
            _signal_group(pgid, signal.SIGKILL)
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._out.close()
        return CommandResult(self.command, self.proc.returncode, self.output, self.proc.pid)


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A group of zombies only (not yet reaped by us or init) counts as gone.
    return any(_pgid_of(pid) == pgid and not _zombie(pid) for pid in _pids())


def _pids() -> List[int]:
    try:
        return [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return []


def _stat_fields(pid: int) -> Optional[List[str]]:
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


def _pgid_of(pid: int) -> Optional[int]:
    fields = _stat_fields(pid)
    return int(fields[2]) if fields else None


def _zombie(pid: int) -> bool:
    fields = _stat_fields(pid)
    return fields is None or fields[0] in ("Z", "X")


def _as_list(commands: Optional[Commands]) -> List[str]:
    if commands is None:
        return []
    if isinstance(commands, str):
        return [commands]
    return list(commands)


def _with_half_time(config: Union[Mapping[str, Any], PathLike, None], half_time: Optional[float]) -> Union[Mapping[str, Any], PathLike, None]:
    if half_time is None:
        return config
    if config is not None and not isinstance(config, Mapping):
        raise ValueError("half_time needs config as a mapping (or set RuleHalfTime in the file)")
    merged: Dict[str, Any] = dict(config or {})
    rules = dict(merged.get("rules", {}))
    rules["RuleHalfTime"] = float(half_time)
    merged["rules"] = rules
    return merged


def _run(
    commands: List[str],
    *,
    sync: bool,
    seed: Optional[int],
    config: Union[Mapping[str, Any], PathLike, None],
    wall_clock_limit: float,
    workdir: Optional[PathLike],
    host: str,
    cwd: Optional[PathLike],
    env: Optional[Mapping[str, str]],
    grace: float,
    server_args: Sequence[str],
    step: Callable[[Monitor, Server, float], bool],
    trainer: Optional[Callable[[Monitor, Server], Any]] = None,
) -> MatchResult:
    started = time.monotonic()
    deadline = started + wall_clock_limit
    if workdir is None:
        wd = Path(tempfile.mkdtemp(prefix="rcss3d-match-"))
    else:
        wd = Path(workdir).absolute()
        wd.mkdir(parents=True, exist_ok=True)
    log = wd / "match.log.gz"
    server = Server(
        sync=sync,
        seed=seed,
        config=config,
        log=log,
        host=host,
        workdir=wd / "server",
        extra_args=server_args,
    )
    child_env: Optional[Dict[str, str]] = None
    if env is not None:
        child_env = dict(os.environ)
        child_env.update(env)
    groups: List[_Group] = []
    monitor: Optional[Monitor] = None
    timed_out = False
    value: Any = None
    results: Optional[Results] = None
    final: Optional[GameState] = None
    try:
        server.start()
        fill = {
            "host": server.host_for_clients(),
            "agent_port": server.agent_port,
            "monitor_port": server.monitor_port,
            "seed": server.seed,
            "workdir": str(wd),
        }
        monitor = server.monitor()
        for i, cmd in enumerate(commands):
            line = cmd.format_map(fill)
            groups.append(_Group(line, wd / f"command-{i}.out", cwd, child_env))
        if trainer is not None:
            # The limit holds for a trainer too: the server is stopped, so
            # the trainer's next read fails.
            expired = threading.Event()

            def expire() -> None:
                expired.set()
                if server.process is not None and server.process.poll() is None:
                    server.process.send_signal(signal.SIGTERM)

            watchdog = threading.Timer(max(0.0, deadline - time.monotonic()), expire)
            watchdog.daemon = True
            watchdog.start()
            try:
                value = trainer(monitor, server)
            except (MonitorError, socket.timeout, TimeoutError):
                if not expired.is_set():
                    raise
            finally:
                watchdog.cancel()
            timed_out = expired.is_set()
        else:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    timed_out = True
                    break
                if not server.running():
                    break
                try:
                    monitor.update(timeout=min(left, 1.0))
                except socket.timeout:
                    pass
                except MonitorError:
                    # The server stopped (its own end of the match).
                    break
                if step(monitor, server, time.monotonic()):
                    break
        final = monitor.state
    finally:
        if monitor is not None:
            monitor.close()
        results = server.stop()
        command_results = [g.stop(grace) for g in groups]
    return MatchResult(
        results=results,
        log=log if log.exists() else None,
        timed_out=timed_out,
        wall_time=time.monotonic() - started,
        seed=server.ready.seed if server.ready else seed,
        workdir=wd,
        commands=command_results,
        value=value,
        final_state=final,
    )


def run_match(
    left: Commands,
    right: Optional[Commands] = None,
    *,
    sync: bool = False,
    seed: Optional[int] = None,
    config: Union[Mapping[str, Any], PathLike, None] = None,
    half_time: Optional[float] = None,
    wall_clock_limit: float = 1200.0,
    kick_off: bool = True,
    min_players: int = 1,
    workdir: Optional[PathLike] = None,
    host: str = "127.0.0.1",
    cwd: Optional[PathLike] = None,
    env: Optional[Mapping[str, str]] = None,
    grace: float = 3.0,
    server_args: Sequence[str] = (),
) -> MatchResult:
    """Plays one match on a fresh server and returns its results.

    ``left``, ``right``: each team's command line(s) (one command may also
    start both teams). The runner kicks off each half once both sides have
    ``min_players`` robots on the field (``kick_off=False`` leaves it to the
    configuration's ``AutomaticKickOff`` or to the teams), and ends the
    match at ``GameOver``, when the server stops by itself, or after
    ``wall_clock_limit`` seconds (``timed_out``; the results are those of
    that moment). ``half_time`` sets ``rules.RuleHalfTime`` (seconds of
    game time). The log and every command's output are in ``workdir`` (a
    new temporary directory when not given; the caller removes it).
    """
    last_kick: Dict[int, float] = {}

    def step(monitor: Monitor, server: Server, now: float) -> bool:
        g = monitor.state
        if g.play_mode == "GameOver":
            return True
        if kick_off and g.play_mode == "BeforeKickOff":
            sides = [r.side for r in g.robots]
            if sides.count("left") >= min_players and sides.count("right") >= min_players:
                # Once per half, again after a second without effect.
                if now - last_kick.get(g.half, -10.0) >= 1.0:
                    monitor.kick_off(None)
                    last_kick[g.half] = now
        return False

    return _run(
        _as_list(left) + _as_list(right),
        sync=sync,
        seed=seed,
        config=_with_half_time(config, half_time),
        wall_clock_limit=wall_clock_limit,
        workdir=workdir,
        host=host,
        cwd=cwd,
        env=env,
        grace=grace,
        server_args=server_args,
        step=step,
    )


def run_trial(
    agent: Commands,
    *,
    trainer: Optional[Callable[[Monitor, Server], Any]] = None,
    until: Optional[Callable[[GameState], bool]] = None,
    sync: bool = True,
    seed: Optional[int] = None,
    config: Union[Mapping[str, Any], PathLike, None] = None,
    half_time: Optional[float] = None,
    wall_clock_limit: float = 300.0,
    workdir: Optional[PathLike] = None,
    host: str = "127.0.0.1",
    cwd: Optional[PathLike] = None,
    env: Optional[Mapping[str, str]] = None,
    grace: float = 3.0,
    server_args: Sequence[str] = (),
) -> MatchResult:
    """Runs one trial: a fresh server (sync mode by default), the agent
    command(s), and either ``trainer(monitor, server)`` (a function that
    drives the trial through the monitor and returns its value, kept in
    :attr:`MatchResult.value`) or a wait until ``until(game_state)`` holds,
    the server stops, or ``wall_clock_limit`` passes. Every process is
    stopped afterwards. The other arguments are those of :func:`run_match`.
    """

    def step(monitor: Monitor, server: Server, now: float) -> bool:
        return until is not None and until(monitor.state)

    return _run(
        _as_list(agent),
        sync=sync,
        seed=seed,
        config=_with_half_time(config, half_time),
        wall_clock_limit=wall_clock_limit,
        workdir=workdir,
        host=host,
        cwd=cwd,
        env=env,
        grace=grace,
        server_args=server_args,
        step=step,
        trainer=trainer,
    )


def remove_workdir(result: MatchResult) -> None:
    """Deletes a match's working directory (log included)."""
    shutil.rmtree(result.workdir, ignore_errors=True)
