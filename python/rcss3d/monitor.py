"""A small monitor client: trainer commands and the game state.

It connects to a server's monitor port (4-byte big-endian length, then an
S-expression message), keeps a copy of the scene graph that the full
states and deltas describe, and answers what a training script asks: the
play mode, game time, half, score, team names, fouls, and the positions of
the ball and of every robot that has joined a team. The message layout is
in the project's docs/protocol.md ("Monitor protocol").

A monitor must read what the server sends to see the game move: call
:meth:`Monitor.update` (one message) or :meth:`Monitor.wait_for` (until a
condition holds) between commands.
"""

from __future__ import annotations

import socket
import struct
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator, List, Optional, Sequence, Tuple, Union

Vec3 = Tuple[float, float, float]

#: The play modes by index, as the monitor protocol numbers them.
PLAY_MODES: Tuple[str, ...] = (
    "BeforeKickOff",
    "KickOff_Left",
    "KickOff_Right",
    "PlayOn",
    "KickIn_Left",
    "KickIn_Right",
    "corner_kick_left",
    "corner_kick_right",
    "goal_kick_left",
    "goal_kick_right",
    "offside_left",
    "offside_right",
    "GameOver",
    "Goal_Left",
    "Goal_Right",
    "free_kick_left",
    "free_kick_right",
    "direct_free_kick_left",
    "direct_free_kick_right",
)

#: The largest message accepted from a server (a full state of 22 robots
#: is about 100 kB).
MAX_MESSAGE = 16 * 1024 * 1024


class MonitorError(RuntimeError):
    """The connection failed, closed, or carried a message this client
    cannot read."""


# -- S-expressions ----------------------------------------------------------

SExp = Union[str, List["SExp"]]


def parse_sexps(text: str) -> List[SExp]:
    """Every top-level S-expression of ``text``: lists of atoms and lists.
    Raises :class:`MonitorError` on unbalanced parentheses."""
    out: List[SExp] = []
    stack: List[List[SExp]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "(":
            stack.append([])
            i += 1
        elif c == ")":
            if not stack:
                raise MonitorError(f"unbalanced ')' at {i}")
            done = stack.pop()
            (stack[-1] if stack else out).append(done)
            i += 1
        elif c.isspace():
            i += 1
        else:
            j = i
            while j < n and text[j] not in "() \t\r\n":
                j += 1
            atom = text[i:j]
            (stack[-1] if stack else out).append(atom)
            i = j
    if stack:
        raise MonitorError("unbalanced '(' at the end of a message")
    return out


# -- the scene ----------------------------------------------------------------

IDENTITY: Tuple[float, ...] = (1.0, 0, 0, 0, 0, 1.0, 0, 0, 0, 0, 1.0, 0, 0, 0, 0, 1.0)


def _mul(a: Sequence[float], b: Sequence[float]) -> Tuple[float, ...]:
    """Product of two column-major 4x4 matrices."""
    return tuple(
        sum(a[k * 4 + row] * b[col * 4 + k] for k in range(4))
        for col in range(4)
        for row in range(4)
    )


@dataclass
class _Node:
    kind: str
    matrix: Tuple[float, ...] = IDENTITY
    mesh: Optional[str] = None
    materials: List[str] = field(default_factory=list)
    children: List["_Node"] = field(default_factory=list)


def _matrix(args: Sequence[SExp]) -> Tuple[float, ...]:
    if len(args) != 16 or not all(isinstance(a, str) for a in args):
        raise MonitorError(f"SLT with {len(args)} values")
    try:
        return tuple(float(a) for a in args)  # type: ignore[arg-type]
    except ValueError as e:
        raise MonitorError(f"SLT value: {e}") from None


def _full_node(item: SExp) -> _Node:
    if not isinstance(item, list) or len(item) < 2 or not isinstance(item[1], str):
        raise MonitorError("a scene node without a kind")
    node = _Node(kind=item[1])
    for sub in item[2:]:
        if not isinstance(sub, list) or not sub or not isinstance(sub[0], str):
            continue
        head, args = sub[0], sub[1:]
        if head == "nd":
            node.children.append(_full_node(sub))
        elif head == "SLT":
            node.matrix = _matrix(args)
        elif head == "load" and args and isinstance(args[0], str):
            node.mesh = args[0]
        elif head in ("resetMaterials", "sMat"):
            node.materials = [a for a in args if isinstance(a, str)]
    return node


def _apply_delta(stored: List[_Node], delta: Sequence[SExp], path: str) -> None:
    nds = [d for d in delta if isinstance(d, list) and d and d[0] == "nd"]
    if len(nds) != len(stored):
        raise MonitorError(f"{path}: {len(nds)} nodes in the delta, {len(stored)} known")
    for i, (node, d) in enumerate(zip(stored, nds)):
        assert isinstance(d, list)
        for sub in d[1:]:
            if isinstance(sub, list) and sub and sub[0] == "SLT" and node.kind == "TRF":
                node.matrix = _matrix(sub[1:])
        _apply_delta(node.children, d[1:], f"{path}/{i}")


def _walk(
    nodes: Sequence[_Node], parent: Sequence[float]
) -> Iterator[Tuple[_Node, Tuple[float, ...]]]:
    for n in nodes:
        world = _mul(parent, n.matrix) if n.kind == "TRF" else tuple(parent)
        yield n, world
        yield from _walk(n.children, world)


@dataclass(frozen=True)
class Robot:
    """A robot that has joined a team, as a monitor sees it."""

    side: str
    """``"left"`` or ``"right"``."""
    unum: int
    position: Vec3
    """The torso's centre in the field frame (metres; x towards the right
    goal, z up)."""


@dataclass
class GameState:
    """The game as last reported by the server."""

    time: float = 0.0
    half: int = 1
    play_mode: str = "BeforeKickOff"
    score_left: int = 0
    score_right: int = 0
    team_left: Optional[str] = None
    team_right: Optional[str] = None
    fouls: List[Tuple[int, int, int, int]] = field(default_factory=list)
    """``(index, type, team (1 left, 2 right), unum)`` of every foul seen."""
    ball: Optional[Vec3] = None
    robots: List[Robot] = field(default_factory=list)
    messages: int = 0
    """Messages applied so far."""

    def robot(self, side: str, unum: int) -> Optional[Robot]:
        """The robot of that side (``left``/``right``) and number, if on the
        field."""
        for r in self.robots:
            if r.side == side and r.unum == unum:
                return r
        return None


class Monitor:
    """A monitor connection to ``host:port``.

    ``secret``: the trainer secret of a guarded monitor port (sent as
    ``(auth SECRET)``). ``timeout``: seconds any read or connect may take.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 3200,
        *,
        timeout: float = 10.0,
        secret: Optional[str] = None,
    ) -> None:
        self.timeout = timeout
        try:
            self.sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as e:
            raise MonitorError(f"cannot connect to the monitor port {host}:{port}: {e}") from e
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.state = GameState()
        self._nodes: List[_Node] = []
        self._full = False
        if secret is not None:
            self.send(f"(auth {secret})")

    # -- reading --------------------------------------------------------

    def _recv_exact(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            try:
                chunk = self.sock.recv(n - len(buf))
            except socket.timeout:
                raise
            except OSError as e:
                raise MonitorError(f"monitor connection failed: {e}") from e
            if not chunk:
                raise MonitorError("the server closed the monitor connection")
            buf += chunk
        return bytes(buf)

    def read_message(self, timeout: Optional[float] = None) -> str:
        """The next message's text. Raises :class:`socket.timeout` when
        none arrives within ``timeout`` (default: the connection's)."""
        self.sock.settimeout(self.timeout if timeout is None else timeout)
        (length,) = struct.unpack(">I", self._recv_exact(4))
        if length > MAX_MESSAGE:
            raise MonitorError(f"a {length}-byte message (limit {MAX_MESSAGE})")
        # The rest of a started message is read with the full timeout.
        self.sock.settimeout(self.timeout)
        return self._recv_exact(length).decode("utf-8", "replace")

    def update(self, timeout: Optional[float] = None) -> GameState:
        """Reads and applies one message; returns the game state."""
        self.apply(self.read_message(timeout))
        return self.state

    def apply(self, text: str) -> None:
        """Applies one monitor message (a full state or a delta)."""
        parts = parse_sexps(text)
        if len(parts) != 3 or not all(isinstance(p, list) for p in parts):
            raise MonitorError("a monitor message of other than three lists")
        preds, header, scene = parts
        assert isinstance(preds, list) and isinstance(header, list) and isinstance(scene, list)
        kind = header[0] if header else None
        if kind == "RSG":
            self._nodes = [_full_node(n) for n in scene if isinstance(n, list)]
            self._full = True
        elif kind == "RDS":
            if self._full:
                _apply_delta(self._nodes, scene, "scene")
        else:
            raise MonitorError(f"unknown header {header!r}")
        self._apply_predicates(preds)
        if self._full:
            self._read_scene()
        self.state.messages += 1

    def _apply_predicates(self, preds: Sequence[SExp]) -> None:
        g = self.state
        for p in preds:
            if not isinstance(p, list) or not p or not isinstance(p[0], str):
                continue
            name = p[0]
            values = [v for v in p[1:] if isinstance(v, str)]
            first = values[0] if values else ""
            try:
                if name == "time":
                    g.time = float(first)
                elif name == "team_left":
                    g.team_left = first
                elif name == "team_right":
                    g.team_right = first
                elif name == "half":
                    g.half = int(first)
                elif name == "score_left":
                    g.score_left = int(first)
                elif name == "score_right":
                    g.score_right = int(first)
                elif name == "play_mode":
                    i = int(first)
                    g.play_mode = PLAY_MODES[i] if 0 <= i < len(PLAY_MODES) else str(i)
                elif name == "foul" and len(values) >= 4:
                    idx, typ, team, unum = (int(v) for v in values[:4])
                    g.fouls.append((idx, typ, team, unum))
            except ValueError:
                continue

    def _read_scene(self) -> None:
        g = self.state
        g.ball = None
        for node, world in _walk(self._nodes, IDENTITY):
            if node.mesh is not None and node.mesh.endswith("soccerball.obj"):
                g.ball = (world[12], world[13], world[14])
                break
        robots: List[Robot] = []
        for top in self._nodes:
            for node, world in _walk([top], IDENTITY):
                mats = node.materials
                side = "left" if "matLeft" in mats else "right" if "matRight" in mats else None
                nums = [m[6:] for m in mats if m.startswith("matNum") and m[6:].isdigit()]
                if side is not None and nums and 1 <= int(nums[0]) <= 11:
                    robots.append(Robot(side, int(nums[0]), (world[12], world[13], world[14])))
                    break
        g.robots = robots

    def wait_for(
        self, condition: Callable[[GameState], bool], timeout: float = 30.0
    ) -> GameState:
        """Reads messages until ``condition(state)`` holds; raises
        :class:`TimeoutError` after ``timeout`` seconds of wall time."""
        deadline = time.monotonic() + timeout
        while not condition(self.state):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"condition not met within {timeout} s: {self.state}")
            try:
                self.update(timeout=min(left, self.timeout))
            except socket.timeout:
                continue
        return self.state

    # -- trainer commands -------------------------------------------------

    def send(self, command: str) -> None:
        """Sends one or more monitor commands as one message."""
        data = command.encode()
        try:
            self.sock.sendall(struct.pack(">I", len(data)) + data)
        except OSError as e:
            raise MonitorError(f"cannot send to the monitor port: {e}") from e

    def kick_off(self, side: Optional[str] = None) -> None:
        """``(kickOff Left|Right|None)``; ``None`` lets the referee choose."""
        self.send(f"(kickOff {_team(side) if side else 'None'})")

    def set_play_mode(self, mode: str) -> None:
        """``(playMode MODE)``, a name of :data:`PLAY_MODES`."""
        if mode not in PLAY_MODES:
            raise ValueError(f"unknown play mode {mode!r}")
        self.send(f"(playMode {mode})")

    def drop_ball(self) -> None:
        """``(dropBall)``."""
        self.send("(dropBall)")

    def move_ball(self, position: Vec3, velocity: Optional[Vec3] = None) -> None:
        """Places the ball (and sets its velocity)."""
        cmd = f"(ball (pos {_xyz(position)})"
        if velocity is not None:
            cmd += f" (vel {_xyz(velocity)})"
        self.send(cmd + ")")

    def move_robot(
        self, side: str, unum: int, position: Vec3, yaw_deg: Optional[float] = None
    ) -> None:
        """Moves a robot: rigidly to ``position``, or upright there facing
        ``yaw_deg`` (degrees about +z) when given."""
        where = (
            f"(pos {_xyz(position)})"
            if yaw_deg is None
            else f"(move {_xyz(position)} {float(yaw_deg)!r})"
        )
        self.send(f"(agent (team {_team(side)}) (unum {int(unum)}) {where})")

    def set_time(self, seconds: float) -> None:
        """``(time T)``: the game clock."""
        self.send(f"(time {float(seconds)!r})")

    def set_score(self, left: int, right: int) -> None:
        """``(score (left L) (right R))``."""
        self.send(f"(score (left {int(left)}) (right {int(right)}))")

    def request_full_state(self) -> None:
        """``(reqfullstate)``: the next message is a full state."""
        self.send("(reqfullstate)")

    def kill_sim(self) -> None:
        """``(killsim)``: stops the server."""
        self.send("(killsim)")

    def close(self) -> None:
        """Closes the connection."""
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self) -> "Monitor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _team(side: str) -> str:
    s = side.lower()
    if s in ("left", "l"):
        return "Left"
    if s in ("right", "r"):
        return "Right"
    raise ValueError(f"side must be left or right, not {side!r}")


def _xyz(v: Sequence[float]) -> str:
    if len(v) != 3:
        raise ValueError("a position or velocity has three numbers")
    return " ".join(repr(float(x)) for x in v)
