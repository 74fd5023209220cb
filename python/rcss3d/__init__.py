"""rcss3d: a SimSpark-compatible RoboCup 3D soccer simulator.

The wheel installs the server binaries (``rcss3d``, ``rcssserver3d``,
``simspark``) and this package:

- :class:`Server`: a server on free ports (context manager), its results;
- :class:`Monitor`: a monitor client (trainer commands, the game state);
- :func:`run_match`, :func:`run_trial`: a fresh server plus team or agent
  commands, a wall-clock limit, every process cleaned up;
- :mod:`rcss3d.batch`: many matches or trials as Ray tasks
  (``pip install rcss3d[ray]``).
"""

from ._binary import BinaryNotFound, server_binary
from .match import MatchResult, run_match, run_trial
from .monitor import GameState, Monitor, MonitorError, Robot
from .ron import Raw, to_ron
from .server import Ready, Results, Server, ServerError

__all__ = [
    "BinaryNotFound",
    "GameState",
    "MatchResult",
    "Monitor",
    "MonitorError",
    "Raw",
    "Ready",
    "Results",
    "Robot",
    "Server",
    "ServerError",
    "run_match",
    "run_trial",
    "server_binary",
    "to_ron",
]
