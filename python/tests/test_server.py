"""rcss3d.Server against the real binary: free ports, the results, the
stop, and no server left behind when the Python process dies."""

from __future__ import annotations

import gzip
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import List

import pytest

import rcss3d
from conftest import alive, wait_gone


def connects(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        return True
    except OSError:
        return False


def test_eight_servers_at_once_on_free_ports_all_listening_all_stopped() -> None:
    servers = [rcss3d.Server(seed=i + 1) for i in range(8)]
    errors: List[BaseException] = []

    def start(s: rcss3d.Server) -> None:
        try:
            s.start()
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=start, args=(s,)) for s in servers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert not errors, errors
        ports = [p for s in servers for p in (s.agent_port, s.monitor_port)]
        assert len(set(ports)) == 16, f"a port clash: {ports}"
        for s in servers:
            assert s.running()
            assert alive(s.pid)
            assert connects(s.agent_port) and connects(s.monitor_port), s
        assert sorted(s.seed for s in servers) == list(range(1, 9))
    finally:
        for s in servers:
            s.stop()
    pids = [s.pid for s in servers]
    assert wait_gone(pids, 5.0) == []
    assert all(s.returncode == 0 for s in servers), [s.returncode for s in servers]
    for p in ports:
        assert not connects(p), f"port {p} still open"


def test_results_config_and_log_after_stop(tmp_path: Path) -> None:
    log = tmp_path / "match.log.gz"
    config = {"rules": {"RuleHalfTime": 42.0}, "monitor": {"log_step": 5}}
    with rcss3d.Server(seed=9, config=config, log=log) as s:
        with s.monitor() as m:
            m.set_score(3, 1)
            m.set_time(12.5)
            state = m.wait_for(lambda g: g.score_left == 3 and g.time >= 12.5, 10)
            assert state.play_mode == "BeforeKickOff"
            assert state.ball is not None and abs(state.ball[2] - 0.042) < 0.01
    r = s.results
    assert r is not None
    assert (r.score_left, r.score_right, r.seed) == (3, 1, 9)
    assert r.game_time >= 12.5 and r.cycles > 0
    assert r.log == str(log)
    with gzip.open(log, "rt") as f:
        first = f.readline()
    assert "(seed 9)" in first
    # The configuration reached the server: the log's environment says it.
    assert "(RuleHalfTime 42)" in first
    # The binary's own checker accepts the log.
    out = subprocess.run(
        [str(s.binary), "check-log", str(log)], capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    assert "valid gzip match log" in out.stdout


def test_without_a_seed_the_server_draws_one_and_a_configured_seed_counts() -> None:
    with rcss3d.Server() as s:
        assert "--seed" not in s.command()
        assert s.seed >= 1
    # No --seed on the command line: the configuration's seed is the run's.
    with rcss3d.Server(config={"seed": 12}) as s:
        assert s.seed == 12
    with pytest.raises(rcss3d.ServerError) as e:
        rcss3d.Server(seed=0).start()
    assert "--seed" in str(e.value)


def test_a_bad_configuration_is_one_clear_error() -> None:
    with pytest.raises(rcss3d.ServerError) as e:
        rcss3d.Server(config={"no_such_key": 1}).start()
    assert "no_such_key" in str(e.value)


def test_no_server_left_when_the_python_parent_is_killed(tmp_path: Path) -> None:
    script = tmp_path / "parent.py"
    script.write_text(
        "import sys, time, rcss3d\n"
        f"s = rcss3d.Server(sync=True, workdir={str(tmp_path / 'server')!r}).start()\n"
        "print(s.pid, s.agent_port, flush=True)\n"
        "time.sleep(600)\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    parent = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert parent.stdout is not None
        line = parent.stdout.readline()
        pid, port = (int(x) for x in line.split())
        assert alive(pid) and connects(port)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        assert wait_gone([pid], 10.0) == [], f"server {pid} outlived its parent"
        assert not connects(port)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def test_ron() -> None:
    text = rcss3d.to_ron(
        {"a": 1, "b": 2.0, "c": True, "d": None, "e": "x\"y", "f": [1, 2], "g": {"h": rcss3d.Raw("Some(0.5)")}}
    )
    assert text == '(a: 1, b: 2.0, c: true, d: None, e: "x\\"y", f: [1, 2], g: (h: Some(0.5)))'
    with pytest.raises(ValueError):
        rcss3d.to_ron({"bad key": 1})
    with pytest.raises(ValueError):
        rcss3d.to_ron({"x": float("nan")})


def test_web_monitor_on_a_free_port_too() -> None:
    with rcss3d.Server(web=True) as s:
        assert s.web_port is not None
        assert len({s.agent_port, s.monitor_port, s.web_port}) == 3
        assert connects(s.web_port)
