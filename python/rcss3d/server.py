"""One rcss3d server as a child process on free ports.

The server is started with port 0 for its ports and prints one JSON line
on stdout once they listen (the ports it got, its pid and seed); this
module reads that line, so nothing is guessed and two servers never race
for a port. The server is started with ``--stop-with-stdin`` and keeps a
pipe from this process as its stdin: when this process ends, however it
ends (SIGKILL included), the kernel closes the pipe and the server stops
cleanly. No orphan is left behind.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Type, Union

from ._binary import server_binary
from .ron import to_ron

if TYPE_CHECKING:
    from .monitor import Monitor

PathLike = Union[str, "os.PathLike[str]"]


class ServerError(RuntimeError):
    """The server did not start, or ended badly. The message carries the
    end of its stderr."""


@dataclass(frozen=True)
class Ready:
    """What the server announced once its ports listened."""

    agent_port: int
    monitor_port: int
    web_port: Optional[int]
    bind: str
    pid: int
    seed: int

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> "Ready":
        if obj.get("event") != "ready":
            raise ValueError(f"not a ready line: {obj!r}")
        return cls(
            agent_port=int(obj["agent_port"]),
            monitor_port=int(obj["monitor_port"]),
            web_port=None if obj.get("web_port") is None else int(obj["web_port"]),
            bind=str(obj["bind"]),
            pid=int(obj["pid"]),
            seed=int(obj["seed"]),
        )


@dataclass(frozen=True)
class Results:
    """The results file the server writes when it stops."""

    team_left: str
    team_right: str
    score_left: int
    score_right: int
    fouls_left: int
    fouls_right: int
    play_mode: str
    half: int
    game_time: float
    server_time: float
    cycles: int
    seed: int
    log: Optional[str]
    raw: Mapping[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> "Results":
        if obj.get("event") != "results":
            raise ValueError(f"not a results object: {obj!r}")
        return cls(
            team_left=str(obj["team_left"]),
            team_right=str(obj["team_right"]),
            score_left=int(obj["score_left"]),
            score_right=int(obj["score_right"]),
            fouls_left=int(obj["fouls_left"]),
            fouls_right=int(obj["fouls_right"]),
            play_mode=str(obj["play_mode"]),
            half=int(obj["half"]),
            game_time=float(obj["game_time"]),
            server_time=float(obj["server_time"]),
            cycles=int(obj["cycles"]),
            seed=int(obj["seed"]),
            log=None if obj.get("log") is None else str(obj["log"]),
            raw=dict(obj),
        )

    def to_dict(self) -> Dict[str, Any]:
        """The results as the server wrote them (JSON types)."""
        return dict(self.raw)


class Server:
    """An rcss3d server on free loopback ports.

    >>> with Server(sync=True, seed=7, config={"rules": {"RuleHalfTime": 60.0}}) as s:
    ...     print(s.agent_port, s.monitor_port)   # connect agents here
    >>> s.results.score_left

    ``sync``: agentSyncMode (and no real-time timer unless ``real_time``);
    ``seed``: the server's seed, at least 1 (``None``: the server draws
    one, which is in :attr:`seed`); ``config``: settings as a mapping (written as a RON file,
    see ``conf/server.ron`` for every key) or the path of a RON file;
    ``log``: the match log's path (``.gz`` for gzip), ``True`` for
    ``match.log.gz`` in :attr:`workdir`, ``None`` for no log; ``host``: the
    address both ports listen on; ``web``: also serve the web monitor;
    ``workdir``: where the configuration, results and stderr files go (by
    default a temporary directory, removed at :meth:`stop` unless the log
    is in it); ``user_config``: also read the user's settings files (off:
    runs are reproducible); ``extra_args``: more command-line flags.
    """

    def __init__(
        self,
        *,
        sync: bool = False,
        real_time: Optional[bool] = None,
        seed: Optional[int] = None,
        config: Union[Mapping[str, Any], PathLike, None] = None,
        log: Union[PathLike, bool, None] = None,
        host: str = "127.0.0.1",
        web: bool = False,
        workdir: Optional[PathLike] = None,
        user_config: bool = False,
        extra_args: Sequence[str] = (),
        binary: Optional[PathLike] = None,
        startup_timeout: float = 30.0,
        env: Optional[Mapping[str, str]] = None,
    ) -> None:
        self.sync = sync
        self.real_time = real_time
        self.requested_seed = seed
        self.config = config
        self.log_request = log
        self.host = host
        self.web = web
        self.user_config = user_config
        self.extra_args = list(extra_args)
        self.binary = Path(binary) if binary is not None else server_binary()
        self.startup_timeout = startup_timeout
        self.env = dict(env) if env is not None else None
        self._given_workdir = Path(workdir) if workdir is not None else None
        self._owned_dir: Optional[Path] = None
        self.workdir: Optional[Path] = None
        self.process: Optional[subprocess.Popen[bytes]] = None
        self.ready: Optional[Ready] = None
        self.results: Optional[Results] = None
        self.log_path: Optional[Path] = None
        self.returncode: Optional[int] = None
        self._stderr: Optional[IO[bytes]] = None

    # -- the ports --------------------------------------------------------

    def _announced(self) -> Ready:
        if self.ready is None:
            raise ServerError("the server is not running (call start() or use `with`)")
        return self.ready

    @property
    def agent_port(self) -> int:
        """The agent port the server listens on."""
        return self._announced().agent_port

    @property
    def monitor_port(self) -> int:
        """The monitor (trainer) port."""
        return self._announced().monitor_port

    @property
    def web_port(self) -> Optional[int]:
        """The web monitor's port, if ``web=True``."""
        return self._announced().web_port

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self._announced().pid

    @property
    def seed(self) -> int:
        """The seed of the run (drawn by the server when none was asked)."""
        return self._announced().seed

    @property
    def stderr_path(self) -> Path:
        """The file the server's log lines (stderr) go to."""
        if self.workdir is None:
            raise ServerError("the server was not started")
        return self.workdir / "server.stderr"

    @property
    def results_path(self) -> Path:
        """The results file the server writes when it stops."""
        if self.workdir is None:
            raise ServerError("the server was not started")
        return self.workdir / "results.json"

    def stderr_tail(self, lines: int = 20) -> str:
        """The last lines the server logged."""
        try:
            text = self.stderr_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    # -- life cycle -------------------------------------------------------

    def command(self) -> List[str]:
        """The command line :meth:`start` runs."""
        assert self.workdir is not None
        cmd = [
            str(self.binary),
            "--bind",
            self.host,
            "--agent-port",
            "0",
            "--monitor-port",
            "0",
            "--results",
            str(self.results_path),
            "--stop-with-stdin",
        ]
        if self.requested_seed is not None:
            cmd += ["--seed", str(self.requested_seed)]
        if not self.user_config:
            cmd.append("--no-user-config")
        if self.sync:
            cmd.append("--sync")
        if self.real_time:
            cmd.append("--real-time")
        if self.web:
            cmd += ["--web-port", "0"]
        if self.config is not None:
            if isinstance(self.config, Mapping):
                conf = self.workdir / "server.ron"
                conf.write_text(to_ron(self.config) + "\n")
            else:
                conf = Path(self.config)
            cmd += ["--config", str(conf)]
        if self.log_path is not None:
            cmd += ["--log", str(self.log_path)]
        return cmd + self.extra_args

    def start(self) -> "Server":
        """Starts the server and returns once its ports listen."""
        if self.process is not None:
            raise ServerError("already started")
        if self._given_workdir is not None:
            self._given_workdir.mkdir(parents=True, exist_ok=True)
            self.workdir = self._given_workdir
        else:
            self._owned_dir = Path(tempfile.mkdtemp(prefix="rcss3d-"))
            self.workdir = self._owned_dir
        if self.log_request is True:
            self.log_path = self.workdir / "match.log.gz"
        elif self.log_request:
            self.log_path = Path(self.log_request).absolute()
        cmd = self.command()
        self._stderr = open(self.stderr_path, "wb")
        env = None
        if self.env is not None:
            env = dict(os.environ)
            env.update(self.env)
        self.process = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
            close_fds=True,
        )
        try:
            line = self._read_ready_line()
            self.ready = Ready.from_json(json.loads(line))
        except BaseException:
            self._kill()
            self._cleanup_files()
            raise
        return self

    def _read_ready_line(self) -> str:
        """The first line on the server's stdout, within the start-up time."""
        assert self.process is not None and self.process.stdout is not None
        out = self.process.stdout
        deadline = time.monotonic() + self.startup_timeout
        buf = b""
        with selectors.DefaultSelector() as sel:
            sel.register(out, selectors.EVENT_READ)
            while b"\n" not in buf:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ServerError(
                        f"no ready line within {self.startup_timeout} s; stderr:\n"
                        + self.stderr_tail()
                    )
                if sel.select(left):
                    chunk = os.read(out.fileno(), 4096)
                    if not chunk:
                        self.process.wait(timeout=5)
                        raise ServerError(
                            f"the server exited at start ({self.process.returncode}); stderr:\n"
                            + self.stderr_tail()
                        )
                    buf += chunk
        line, _, _rest = buf.partition(b"\n")
        return line.decode("utf-8", "replace")

    def running(self) -> bool:
        """Whether the server process is still running."""
        return self.process is not None and self.process.poll() is None

    def wait(self, timeout: Optional[float] = None) -> Optional[Results]:
        """Waits for the server to stop by itself (``(killsim)``, the end of
        the match with ``AutomaticQuit``); returns its results.
        Raises :class:`subprocess.TimeoutExpired` after ``timeout``."""
        if self.process is None:
            raise ServerError("the server was not started")
        self.returncode = self.process.wait(timeout=timeout)
        return self._finish()

    def stop(self, timeout: float = 10.0) -> Optional[Results]:
        """Stops the server as SIGTERM does (the log is completed, the
        results written) and returns the results; a server that does not
        exit within ``timeout`` is killed (and has no results)."""
        if self.process is None:
            return self.results
        if self.process.poll() is None:
            try:
                self.process.send_signal(signal.SIGTERM)
                self.returncode = self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self._kill()
        return self._finish()

    def _finish(self) -> Optional[Results]:
        assert self.process is not None
        self.returncode = self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass
        try:
            self.results = Results.from_json(json.loads(self.results_path.read_text()))
        except (OSError, ValueError, KeyError):
            self.results = None
        self._cleanup_files()
        return self.results

    def _kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def _cleanup_files(self) -> None:
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        owned = self._owned_dir
        if owned is None:
            return
        if self.log_path is not None and owned in self.log_path.parents:
            # The log is the caller's now; the rest of the directory goes.
            for name in ("server.ron", "results.json"):
                (owned / name).unlink(missing_ok=True)
        else:
            shutil.rmtree(owned, ignore_errors=True)
        self._owned_dir = None

    def __enter__(self) -> "Server":
        return self.start()

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.stop()

    def monitor(self, timeout: float = 10.0) -> "Monitor":
        """A monitor client connected to this server's monitor port."""
        from .monitor import Monitor

        return Monitor(self.host_for_clients(), self.monitor_port, timeout=timeout)

    def host_for_clients(self) -> str:
        """The address clients on this machine connect to."""
        return "127.0.0.1" if self.host in ("0.0.0.0", "::") else self.host

    def __repr__(self) -> str:
        if self.ready is None:
            return "Server(not started)"
        return (
            f"Server(pid={self.pid}, agent_port={self.agent_port}, "
            f"monitor_port={self.monitor_port}, seed={self.seed})"
        )
