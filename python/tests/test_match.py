"""run_match and run_trial with the repository's scripted stand-in teams
(the load generator): a whole short match in sync mode, the wall-clock
limit, a trainer-driven trial, and no process left afterwards."""

from __future__ import annotations

import gzip
from pathlib import Path

import rcss3d
from conftest import group_members, team_command, teams_command, wait_gone

#: Short halves: a whole match in a few seconds of sync-mode time.
SHORT = {"rules": {"RuleHalfTime": 3.0, "WaitBeforeKickOff": 0.5}}


def test_a_short_match_of_two_scripted_teams(loadgen: Path, tmp_path: Path) -> None:
    result = rcss3d.run_match(
        teams_command(loadgen, "Alpha", "Beta", 3),
        sync=True,
        seed=21,
        config=SHORT,
        wall_clock_limit=120,
        min_players=3,
        workdir=tmp_path / "m",
    )
    assert not result.timed_out, result
    r = result.results
    assert r is not None, result
    assert {r.team_left, r.team_right} == {"Alpha", "Beta"}
    assert r.play_mode == "GameOver" and r.half == 2
    assert r.game_time >= 6.0
    assert r.seed == 21 == result.seed
    assert result.log is not None and result.log.stat().st_size > 0
    with gzip.open(result.log, "rt") as f:
        lines = f.read().splitlines()
    assert "(seed 21)" in lines[0] and "(team_left" in "".join(lines)
    # The runner's monitor saw the six robots with their positions.
    final = result.final_state
    assert final is not None
    assert sorted((rb.side, rb.unum) for rb in final.robots) == sorted(
        [(side, n) for side in ("left", "right") for n in (1, 2, 3)]
    )
    assert all(abs(rb.position[0]) < 16 and abs(rb.position[1]) < 11 for rb in final.robots)
    # Both teams' process groups are gone.
    assert len(result.commands) == 1
    for c in result.commands:
        assert c.returncode is not None
        assert c.output.is_file()
        assert group_members(c.pid) == []
    assert result.to_dict()["results"]["seed"] == 21


def test_the_wall_clock_limit_ends_a_match_and_stops_every_process(tmp_path: Path) -> None:
    # Teams that never connect: nobody kicks off, the limit ends it. Each
    # "team" starts a child of its own, which must be stopped too.
    pidfile = tmp_path / "pids"
    team = f"sleep 600 & echo $! >> {pidfile}; echo $$ >> {pidfile}; wait"
    result = rcss3d.run_match(team, team, wall_clock_limit=2.0, workdir=tmp_path / "m", grace=2.0)
    assert result.timed_out
    assert result.results is not None
    assert result.results.play_mode == "BeforeKickOff"
    assert 2.0 <= result.wall_time < 20.0
    pids = [int(x) for x in pidfile.read_text().split()]
    assert len(pids) == 4
    assert wait_gone(pids, 5.0) == []
    for c in result.commands:
        assert c.returncode is not None and c.returncode < 0, c


def test_a_trial_driven_by_a_trainer(loadgen: Path, tmp_path: Path) -> None:
    def trainer(monitor: rcss3d.Monitor, server: rcss3d.Server) -> dict:
        monitor.wait_for(lambda g: g.robot("left", 1) is not None, 30)
        monitor.set_play_mode("PlayOn")
        monitor.move_robot("left", 1, (-3.0, 1.0, 0.4), yaw_deg=0.0)
        monitor.move_ball((2.0, -1.0, 0.042), velocity=(1.0, 0.0, 0.0))
        g = monitor.wait_for(
            lambda g: g.ball is not None and g.ball[0] > 2.05
            and g.robot("left", 1) is not None
            and abs(g.robot("left", 1).position[0] + 3.0) < 0.5,  # type: ignore[union-attr]
            30,
        )
        assert g.ball is not None
        return {"ball_x": g.ball[0], "time": g.time}

    result = rcss3d.run_trial(
        team_command(loadgen, "Trial", 1),
        trainer=trainer,
        seed=4,
        wall_clock_limit=60,
        workdir=tmp_path / "t",
    )
    assert not result.timed_out
    assert result.value["ball_x"] > 2.05
    assert result.results is not None and result.results.team_left == "Trial"
    for c in result.commands:
        assert group_members(c.pid) == []


def test_a_trainer_past_the_limit_is_stopped(tmp_path: Path) -> None:
    def trainer(monitor: rcss3d.Monitor, server: rcss3d.Server) -> None:
        # Waits for what never happens; the limit stops the server.
        monitor.wait_for(lambda g: g.score_left == 99, 600)

    result = rcss3d.run_trial("sleep 600", trainer=trainer, wall_clock_limit=1.5, workdir=tmp_path / "t")
    assert result.timed_out
    assert result.wall_time < 20
