"""rcss3d.batch: matches as Ray tasks.

The spec file is read without Ray. The local run starts Ray on this
machine. The slow test builds a real two-node Ray cluster on loopback
(``ray start --head`` and ``ray start --address``), plays 6 short matches
across it, kills the second node's raylet while a match runs there, and
checks all 6 complete with results and logs (the interrupted ones
retried on the head node).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Dict, Iterator, List, Optional

import pytest

from conftest import alive, teams_command, wait_gone
from rcss3d.batch import MatchSpec, load_spec, main

SHORT = {"rules": {"RuleHalfTime": 3.0, "WaitBeforeKickOff": 0.5}}


def test_the_spec_file(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(
        """
out_dir = "out"
num_cpus = 1
[defaults]
sync = true
half_time = 5.0
config = { rules = { WaitBeforeKickOff = 1.0 } }
[[match]]
name = "ab"
left = "a {agent_port}"
right = "b {agent_port}"
seed = 10
repeat = 3
[[trial]]
agent = "t {agent_port}"
wall_clock_limit = 30
"""
    )
    specs, run = load_spec(spec)
    assert run == {"out_dir": "out", "num_cpus": 1}
    assert [s.name for s in specs] == ["ab-1", "ab-2", "ab-3", "trial-1"]
    assert [s.options.get("seed") for s in specs[:3]] == [10, 11, 12]
    assert specs[0].options["config"] == {"rules": {"WaitBeforeKickOff": 1.0}}
    assert specs[3].options["wall_clock_limit"] == 30

    bad = tmp_path / "bad.toml"
    bad.write_text('[[match]]\nname = "x"\nleft = "a"\nhalftime = 3\n')
    with pytest.raises(ValueError, match="halftime"):
        load_spec(bad)
    bad.write_text("[[match]\n")
    with pytest.raises(ValueError, match="bad.toml"):
        load_spec(bad)
    assert main([str(bad)]) == 2


ray = pytest.importorskip("ray", reason="rcss3d[ray] not installed")


def _check_batch(results: list, names: List[str], out: Path) -> None:
    assert [r.name for r in results] == names
    for r in results:
        assert r.ok, f"{r.name}: {r.error}\n{r.server_stderr.decode(errors='replace')[-2000:]}"
        assert r.results is not None and r.results["play_mode"] == "GameOver", r.results
        assert {r.results["team_left"], r.results["team_right"]} == {"Alpha", "Beta"}
        assert r.log is not None
        first = gzip.decompress(r.log).decode().splitlines()[0]
        assert f"(seed {r.results['seed']})" in first
        # Saved for the caller.
        assert (out / r.name / "match.log.gz").read_bytes() == r.log
        assert json.loads((out / r.name / "results.json").read_text()) == r.results
    summary = json.loads((out / "summary.json").read_text())
    assert [s["name"] for s in summary] == names and all(s["ok"] for s in summary)


def test_two_matches_on_a_local_ray(
    loadgen: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    specs = [
        MatchSpec(
            f"m{i}",
            teams_command(loadgen, "Alpha", "Beta", 2),
            sync=True,
            seed=100 + i,
            config=SHORT,
            min_players=2,
            wall_clock_limit=120,
        )
        for i in range(2)
    ]
    from rcss3d.batch import run_batch

    tmp = Path(tempfile.mkdtemp(prefix="rt-", dir="/tmp"))
    # Ray's processes inherit the marker: what outlives ray.shutdown() is
    # stopped by pid.
    monkeypatch.setenv("RCSS3D_TEST_RAY_CLUSTER", str(tmp))
    try:
        ray.init(num_cpus=2, include_dashboard=False, _temp_dir=str(tmp), log_to_driver=False)
        results = run_batch(specs, num_cpus=1, out_dir=tmp_path / "out")
    finally:
        ray.shutdown()
        _stop_marked(f"RCSS3D_TEST_RAY_CLUSTER={tmp}")
        shutil.rmtree(tmp, ignore_errors=True)
    _check_batch(results, ["m0", "m1"], tmp_path / "out")
    assert [r.results["seed"] for r in results] == [100, 101]


# -- a two-node cluster ------------------------------------------------------


def _processes_with(text: str) -> List[int]:
    """Pids whose command line contains ``text``."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmd:
            out.append(int(name))
    return out


def _processes_in_env(entry: str) -> List[int]:
    """Pids whose environment holds ``entry`` (``NAME=value``): the
    processes of a Ray node rename themselves, but keep the environment
    they were started with."""
    want = entry.encode()
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if want in env:
            out.append(int(name))
    return out


def _stop_marked(marker: str) -> None:
    """Stops every process whose environment holds ``marker``, by pid:
    SIGTERM, then SIGKILL what is left after 10 s."""
    ours = set(_processes_in_env(marker))
    for pid in ours:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    left = wait_gone(ours, 10.0)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert wait_gone(left, 10.0) == [], f"processes {left} survived SIGKILL"


def _ppid(pid: int) -> Optional[int]:
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    return int(text[text.rfind(")") + 2 :].split()[1])


def _comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def _descends_from(pid: int, ancestor: int) -> bool:
    seen = 0
    while pid > 1 and seen < 64:
        parent = _ppid(pid)
        if parent is None:
            return False
        if parent == ancestor:
            return True
        pid, seen = parent, seen + 1
    return False


def _ray_start(args: List[str], env: Dict[str, str]) -> None:
    ray_bin = str(Path(sys.executable).parent / "ray")
    out = subprocess.run([ray_bin, "start", *args], capture_output=True, text=True, env=env, timeout=180)
    assert out.returncode == 0, f"ray start {args}: {out.stdout}\n{out.stderr}"


#: Each node on its own loopback address: the driver attaches to the head
#: node's raylet by address, and Ray rewrites only 127.0.0.1 and localhost
#: to the machine's routable address.
NODE_IP = {"head": "127.0.0.2", "second": "127.0.0.3"}


def _free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _node_args(tag: str) -> List[str]:
    """Address and ports of one node, the ports picked free."""
    ip = NODE_IP[tag]
    ports = [_free_port(ip) for _ in range(6)]
    lo = 20000 + (os.getpid() % 200) * 100 + (0 if tag == "head" else 50)
    return [
        f"--node-ip-address={ip}",
        f"--node-manager-port={ports[0]}",
        f"--object-manager-port={ports[1]}",
        f"--dashboard-agent-listen-port={ports[2]}",
        f"--dashboard-agent-grpc-port={ports[3]}",
        f"--runtime-env-agent-port={ports[4]}",
        f"--metrics-export-port={ports[5]}",
        f"--min-worker-port={lo}",
        f"--max-worker-port={lo + 49}",
        "--num-cpus=2",
        f'--resources={{"{tag}": 100}}',
        "--disable-usage-stats",
    ]


@pytest.fixture
def two_node_cluster() -> Iterator[Dict[str, object]]:
    temp = Path(tempfile.mkdtemp(prefix="rt-", dir="/tmp"))
    env = dict(os.environ)
    # Marks every process of this cluster, for the cleanup; the tasks'
    # temporary directories (left behind by a killed node) go with it.
    marker = f"RCSS3D_TEST_RAY_CLUSTER={temp}"
    env["RCSS3D_TEST_RAY_CLUSTER"] = str(temp)
    env["TMPDIR"] = str(temp)
    # Node failure is detected within a few seconds.
    env["RAY_health_check_period_ms"] = "1000"
    env["RAY_health_check_failure_threshold"] = "3"
    head = NODE_IP["head"]
    port = _free_port(head)
    try:
        _ray_start(
            [
                "--head",
                f"--port={port}",
                f"--ray-client-server-port={_free_port(head)}",
                "--include-dashboard=false",
                f"--temp-dir={temp}",
                *_node_args("head"),
            ],
            env,
        )
        address = f"{head}:{port}"
        ray.init(address=address, _node_ip_address=head, log_to_driver=False)
        _ray_start([f"--address={address}", *_node_args("second")], env)
        deadline = time.monotonic() + 60
        while len([n for n in ray.nodes() if n["Alive"]]) < 2:
            assert time.monotonic() < deadline, "the second node did not join"
            time.sleep(0.2)  # the GCS has no join event for a driver
        second = [n for n in ray.nodes() if n["Alive"] and "second" in n["Resources"]]
        assert len(second) == 1
        yield {"address": address, "temp": temp, "second_node": second[0]["NodeID"]}
    finally:
        ray.shutdown()
        _stop_marked(marker)
        shutil.rmtree(temp, ignore_errors=True)


@pytest.mark.slow
def test_six_matches_on_two_nodes_survive_a_dead_raylet(
    loadgen: Path, tmp_path: Path, two_node_cluster: Dict[str, object]
) -> None:
    from rcss3d.batch import run_batch

    temp = str(two_node_cluster["temp"])
    specs = [
        MatchSpec(
            f"match-{i}",
            teams_command(loadgen, "Alpha", "Beta", 2),
            sync=True,
            seed=200 + i,
            # Long enough that the raylet dies while a match is on.
            config={"rules": {"RuleHalfTime": 8.0, "WaitBeforeKickOff": 0.5}},
            min_players=2,
            wall_clock_limit=240,
        )
        for i in range(6)
    ]
    # The second node's raylet, among the processes of this cluster.
    raylets = [p for p in _processes_with(temp) if _comm(p) == "raylet"]
    second = [p for p in raylets if "second" in open(f"/proc/{p}/cmdline", "rb").read().decode(errors="replace")]
    assert len(raylets) == 2 and len(second) == 1, raylets
    raylet = second[0]

    killed: Dict[str, object] = {}

    def kill_when_a_match_runs_there() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            servers = [p for p in _processes_with("--stop-with-stdin") if _descends_from(p, raylet)]
            if servers:
                killed["servers"] = servers
                os.kill(raylet, signal.SIGKILL)
                killed["at"] = time.monotonic()
                return
            time.sleep(0.1)  # watching for a process to appear; no event

    killer = threading.Thread(target=kill_when_a_match_runs_there)
    killer.start()
    started = time.monotonic()
    results = run_batch(specs, num_cpus=1, max_retries=3, out_dir=tmp_path / "out")
    killer.join()
    assert "at" in killed, "no match ran on the second node"
    _check_batch(results, [s.name for s in specs], tmp_path / "out")
    # The servers under the dead node stopped with their worker.
    assert wait_gone(killed["servers"], 15.0) == []  # type: ignore[arg-type]
    assert not alive(raylet)
    print(f"6 matches in {time.monotonic() - started:.1f} s; raylet killed after {float(killed['at']) - started:.1f} s")  # type: ignore[arg-type]
