"""Many matches or trials as Ray tasks, on this machine or on a cluster.

Each match or trial is one Ray task that reserves ``num_cpus`` (a server
and its teams), runs :func:`rcss3d.run_match` or :func:`rcss3d.run_trial`
in a temporary directory on whichever node Ray picks, and returns the
results *and the bytes of the log and the commands' output* to the
caller, so no shared filesystem is assumed. A task whose node dies is
retried elsewhere (``max_retries``); a match that fails by itself is not
retried, its error is reported.

Needs Ray: ``pip install rcss3d[ray]``. Every node needs ``rcss3d``
installed and the team programs the commands name.

From Python::

    from rcss3d.batch import MatchSpec, run_batch
    specs = [MatchSpec(name=f"m{i}", left="...", right="...", seed=i + 1) for i in range(6)]
    for r in run_batch(specs, address=None, out_dir="results"):
        print(r.name, r.ok, r.results)

From the command line, with a TOML file (``python -m rcss3d.batch
SPEC.toml``; ``--help`` for the options)::

    address = "auto"          # omit: a local Ray on this machine
    out_dir = "results"
    num_cpus = 2              # per task
    max_retries = 3

    [defaults]                # for every match and trial
    sync = true
    half_time = 60.0
    wall_clock_limit = 600
    config = { rules = { WaitBeforeKickOff = 2.0 } }

    [[match]]
    name = "alpha-beta-1"
    left = "./alpha/start.sh {host} {agent_port}"
    right = "./beta/start.sh {host} {agent_port}"
    seed = 1
    repeat = 3                # alpha-beta-1-1 .. -3, seeds 1, 2, 3

    [[trial]]
    name = "kick"
    agent = "python kick_trial.py --port {agent_port} --monitor {monitor_port}"

Each match's results (JSON), log and command output land in
``out_dir/NAME/``; ``out_dir/summary.json`` lists them all.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from .match import run_match, run_trial

#: Bytes of each command's output returned to the caller (the end of it).
OUTPUT_TAIL = 64 * 1024


@dataclass
class MatchSpec:
    """One match: the keyword arguments of :func:`rcss3d.run_match`."""

    name: str
    left: Union[str, List[str]]
    right: Union[str, List[str], None] = None
    options: Dict[str, Any] = field(default_factory=dict)
    """Any other :func:`rcss3d.run_match` argument (``sync``, ``seed``,
    ``config``, ``half_time``, ``wall_clock_limit``, ``cwd``, ``env``...)."""

    def __init__(self, name: str, left: Union[str, List[str]], right: Union[str, List[str], None] = None, **options: Any) -> None:
        self.name = name
        self.left = left
        self.right = right
        self.options = options


@dataclass
class TrialSpec:
    """One trial: the keyword arguments of :func:`rcss3d.run_trial`
    (a ``trainer`` function must be importable on the nodes)."""

    name: str
    agent: Union[str, List[str]]
    options: Dict[str, Any] = field(default_factory=dict)

    def __init__(self, name: str, agent: Union[str, List[str]], **options: Any) -> None:
        self.name = name
        self.agent = agent
        self.options = options


Spec = Union[MatchSpec, TrialSpec]


@dataclass
class BatchResult:
    """What one task brought back."""

    name: str
    ok: bool
    """The match ran to its end (or its limit) and the server gave results."""
    results: Optional[Dict[str, Any]]
    """The server's results (see :class:`rcss3d.Results`)."""
    match: Optional[Dict[str, Any]]
    """:meth:`rcss3d.MatchResult.to_dict` of the run (paths are the node's)."""
    log: Optional[bytes]
    """The match log's bytes (gzip)."""
    outputs: List[bytes]
    """The end of each command's output."""
    server_stderr: bytes
    """The end of the server's log lines."""
    error: Optional[str]
    """The exception's traceback when the run failed."""
    node: Dict[str, str]
    """Where it ran: ``hostname`` and Ray's ``node_id``."""
    log_file: Optional[Path] = None
    """Where :func:`run_batch` saved the log, with ``out_dir``."""


def _tail(path: Path, limit: int = OUTPUT_TAIL) -> bytes:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - limit))
            return f.read()
    except OSError:
        return b""


def run_spec(spec: Spec) -> BatchResult:
    """Runs one match or trial here, in a temporary directory that is
    removed afterwards; everything worth keeping is in the result."""
    node = {"hostname": socket.gethostname(), "node_id": _ray_node_id()}
    workdir = Path(tempfile.mkdtemp(prefix="rcss3d-task-"))
    try:
        if isinstance(spec, MatchSpec):
            m = run_match(spec.left, spec.right, workdir=workdir, **spec.options)
        else:
            m = run_trial(spec.agent, workdir=workdir, **spec.options)
        log = m.log.read_bytes() if m.log is not None else None
        return BatchResult(
            name=spec.name,
            ok=m.results is not None,
            results=m.results.to_dict() if m.results else None,
            match=m.to_dict(),
            log=log,
            outputs=[_tail(c.output) for c in m.commands],
            server_stderr=_tail(workdir / "server" / "server.stderr"),
            error=None if m.results is not None else "the server left no results",
            node=node,
        )
    except Exception:
        return BatchResult(
            name=spec.name,
            ok=False,
            results=None,
            match=None,
            log=None,
            outputs=[],
            server_stderr=_tail(workdir / "server" / "server.stderr"),
            error=traceback.format_exc(),
            node=node,
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _ray_node_id() -> str:
    try:
        import ray

        if ray.is_initialized():
            return str(ray.get_runtime_context().get_node_id())
    except Exception:
        pass
    return ""


def run_batch(
    specs: Sequence[Spec],
    *,
    address: Optional[str] = None,
    num_cpus: float = 2.0,
    max_retries: int = 3,
    out_dir: Optional[Union[str, "os.PathLike[str]"]] = None,
    runtime_env: Optional[Mapping[str, Any]] = None,
    resources: Optional[Mapping[str, float]] = None,
    progress: bool = False,
) -> List[BatchResult]:
    """Runs every spec as a Ray task and returns the results in the order
    of ``specs``.

    ``address``: a running Ray cluster (``"auto"``, ``"HOST:PORT"``,
    ``"ray://HOST:10001"``); ``None`` uses ``$RAY_ADDRESS`` if set, else
    starts Ray on this machine. When Ray is already initialised in this
    process it is used as it is. ``num_cpus``: CPUs each task reserves;
    ``max_retries``: retries of a task whose worker or node died;
    ``resources``: custom resources each task needs (to pin work to
    labelled nodes); ``out_dir``: where to save each result's files (see
    the module's description).
    """
    try:
        import ray
    except ImportError as e:  # pragma: no cover - depends on the extra
        raise ImportError("rcss3d.batch needs Ray: pip install 'rcss3d[ray]'") from e

    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise ValueError("spec names must be unique (they name the output directories)")
    if not ray.is_initialized():
        kwargs: Dict[str, Any] = {"log_to_driver": False}
        if runtime_env is not None:
            kwargs["runtime_env"] = dict(runtime_env)
        ray.init(address=address, **kwargs)
    task = ray.remote(run_spec).options(
        num_cpus=num_cpus,
        max_retries=max_retries,
        retry_exceptions=False,
        resources=dict(resources) if resources else None,
        name="rcss3d-match",
    )
    refs = [task.remote(s) for s in specs]
    pending = list(refs)
    done_count = 0
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        done_count += len(ready)
        if progress:
            print(f"rcss3d.batch: {done_count}/{len(refs)} done", file=sys.stderr, flush=True)
    results: List[BatchResult] = []
    for spec, ref in zip(specs, refs):
        try:
            results.append(ray.get(ref))
        except Exception:
            results.append(
                BatchResult(
                    name=spec.name,
                    ok=False,
                    results=None,
                    match=None,
                    log=None,
                    outputs=[],
                    server_stderr=b"",
                    error=traceback.format_exc(),
                    node={},
                )
            )
    if out_dir is not None:
        save(results, Path(out_dir))
    return results


def save(results: Sequence[BatchResult], out_dir: Path) -> None:
    """Writes each result's files to ``out_dir/NAME/`` (``results.json``,
    ``match.log.gz``, ``command-N.out``, ``server.stderr``, ``error.txt``)
    and ``out_dir/summary.json``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    summary = []
    for r in results:
        d = out_dir / r.name
        d.mkdir(parents=True, exist_ok=True)
        (d / "results.json").write_text(json.dumps(r.results, indent=1) + "\n")
        if r.log is not None:
            r.log_file = d / "match.log.gz"
            r.log_file.write_bytes(r.log)
        for i, out in enumerate(r.outputs):
            (d / f"command-{i}.out").write_bytes(out)
        (d / "server.stderr").write_bytes(r.server_stderr)
        if r.error:
            (d / "error.txt").write_text(r.error)
        summary.append(
            {
                "name": r.name,
                "ok": r.ok,
                "results": r.results,
                "log": str(r.log_file) if r.log_file else None,
                "node": r.node,
                "error": r.error,
                "timed_out": (r.match or {}).get("timed_out"),
                "wall_time": (r.match or {}).get("wall_time"),
            }
        )
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")


# -- the spec file ------------------------------------------------------------

_RUN_KEYS = {"address", "out_dir", "num_cpus", "max_retries", "resources", "runtime_env"}


def load_spec(path: Union[str, "os.PathLike[str]"]) -> "tuple[List[Spec], Dict[str, Any]]":
    """Reads a TOML spec file: the specs, and the run options found at its
    top level (``address``, ``out_dir``, ``num_cpus``, ``max_retries``,
    ``resources``, ``runtime_env``). Raises :class:`ValueError` naming the
    file and the entry for a bad entry."""
    try:
        import tomllib  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef,unused-ignore]
    text = Path(path).read_bytes()
    try:
        data = tomllib.loads(text.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: {e}") from None
    unknown = set(data) - _RUN_KEYS - {"defaults", "match", "trial"}
    if unknown:
        raise ValueError(f"{path}: unknown top-level keys {sorted(unknown)}")
    defaults = dict(data.get("defaults", {}))
    specs: List[Spec] = []
    for kind in ("match", "trial"):
        for i, entry in enumerate(data.get(kind, [])):
            where = f"{path}: [[{kind}]] #{i + 1}"
            entry = dict(entry)
            name = entry.pop("name", f"{kind}-{i + 1}")
            repeat = int(entry.pop("repeat", 1))
            options = {**defaults, **entry}
            if kind == "match":
                if "left" not in options:
                    raise ValueError(f"{where}: no `left` command")
                left, right = options.pop("left"), options.pop("right", None)
            else:
                if "agent" not in options:
                    raise ValueError(f"{where}: no `agent` command")
                agent = options.pop("agent")
            for r in range(repeat):
                opts = dict(options)
                spec_name = name if repeat == 1 else f"{name}-{r + 1}"
                if repeat > 1 and opts.get("seed") is not None:
                    opts["seed"] = int(opts["seed"]) + r
                if kind == "match":
                    specs.append(MatchSpec(spec_name, left, right, **opts))
                else:
                    specs.append(TrialSpec(spec_name, agent, **opts))
    if not specs:
        raise ValueError(f"{path}: no [[match]] or [[trial]] entries")
    _check_options(specs, path)
    run = {k: data[k] for k in _RUN_KEYS if k in data}
    return specs, run


def _check_options(specs: Sequence[Spec], path: Any) -> None:
    import inspect

    for s in specs:
        fn = run_match if isinstance(s, MatchSpec) else run_trial
        allowed = set(inspect.signature(fn).parameters) - {"left", "right", "agent", "workdir"}
        bad = set(s.options) - allowed
        if bad:
            raise ValueError(f"{path}: {s.name}: unknown options {sorted(bad)}")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m rcss3d.batch SPEC.toml``: runs the spec, saves the
    results, prints one line per match; exit status 1 if any failed."""
    p = argparse.ArgumentParser(
        prog="python -m rcss3d.batch",
        description="Run the matches and trials of a TOML spec as Ray tasks (module doc: the format).",
    )
    p.add_argument("spec", help="the TOML spec file")
    p.add_argument("--address", help="Ray cluster address (default: the spec's, else a local Ray)")
    p.add_argument("--out-dir", help="where results and logs go (default: the spec's, else ./rcss3d-batch)")
    p.add_argument("--num-cpus", type=float, help="CPUs each task reserves (default: the spec's, else 2)")
    p.add_argument("--max-retries", type=int, help="retries after a node or worker dies (default 3)")
    args = p.parse_args(argv)
    try:
        specs, run = load_spec(args.spec)
    except (OSError, ValueError) as e:
        print(f"rcss3d.batch: error: {e}", file=sys.stderr)
        return 2
    out_dir = Path(args.out_dir or run.get("out_dir") or "rcss3d-batch")
    started = time.monotonic()
    results = run_batch(
        specs,
        address=args.address or run.get("address"),
        num_cpus=args.num_cpus if args.num_cpus is not None else float(run.get("num_cpus", 2.0)),
        max_retries=args.max_retries if args.max_retries is not None else int(run.get("max_retries", 3)),
        out_dir=out_dir,
        runtime_env=run.get("runtime_env"),
        resources=run.get("resources"),
        progress=True,
    )
    failed = 0
    for r in results:
        if r.ok and r.results:
            res = r.results
            print(
                f"{r.name}: {res['team_left'] or '-'} {res['score_left']}:{res['score_right']} "
                f"{res['team_right'] or '-'} ({res['play_mode']}, {res['game_time']:.1f} s, seed {res['seed']}) "
                f"on {r.node.get('hostname', '?')}"
            )
        else:
            failed += 1
            last = (r.error or "").strip().splitlines()[-1:] or ["?"]
            print(f"{r.name}: FAILED: {last[0]}")
    print(
        f"{len(results) - failed}/{len(results)} done in {time.monotonic() - started:.1f} s; "
        f"results in {out_dir}/summary.json",
        file=sys.stderr,
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = [
    "BatchResult",
    "MatchSpec",
    "TrialSpec",
    "load_spec",
    "main",
    "run_batch",
    "run_spec",
    "save",
]
