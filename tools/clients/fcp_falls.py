#!/usr/bin/env python3
"""Falls in every direction and FC Portugal's get-up, against any server.

An experiment client (not part of the server, not run by the test suite):
one FCPCodebase agent connects to the agent and monitor ports, is put at
(-6, 0) in PlayOn with the trainer commands FCP's own utilities use, and
then, for each direction in --directions (default: front, back, left,
right), leans its legs with FCP's pose "Fall_<Direction>" until it is down
(head below 0.3 m or torso inclined over 50 degrees, as FCP's `Get_Up`
decides), runs FCP's "Get_Up" until it reports done (at most 12 s), stands
1 s and records whether it is standing (head above 0.4 m, torso within
20 degrees). Every phase is bounded in cycles and the run in wall time.

Needs FCPCodebase (numpy < 2, its C++ modules built) and its Python:
  "$FCP_PY" fcp_falls.py --fcp-dir "$FCP_DIR" -p 3100 -m 3200 -r 1 --out falls.json
`fcp_falls_matrix.sh` runs it for robot types 0-4 against a fresh server
per run; `fcp_falls_summary.py` tabulates the outcomes.
"""

import argparse
import ipaddress
import json
import os
import signal
import sys
import time
import traceback

DIRECTIONS = ("Front", "Back", "Left", "Right")


class Timeout(BaseException):
    pass


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fcp-dir", default=os.environ.get("FCP_DIR"))
    ap.add_argument("-i", dest="host", default="127.0.0.1")
    ap.add_argument("-p", dest="port", type=int, default=3100)
    ap.add_argument("-m", dest="mport", type=int, default=3200)
    ap.add_argument("-r", dest="robot_type", type=int, default=1, choices=range(5))
    ap.add_argument("--directions", default=",".join(DIRECTIONS))
    ap.add_argument("--wall-limit", type=float, default=300.0)
    ap.add_argument("--out", default="-")
    args = ap.parse_args()
    if not args.fcp_dir:
        ap.error("give --fcp-dir or set FCP_DIR")
    if not ipaddress.ip_address(args.host).is_loopback:
        ap.error("loopback only")
    directions = [d.strip().capitalize() for d in args.directions.split(",") if d.strip()]
    for d in directions:
        if d not in DIRECTIONS:
            ap.error("unknown direction %r" % d)

    res = {"client": "FCPCodebase falls", "robot_type": args.robot_type, "falls": [],
           "error": None}

    def on_sig(signum, frame):
        raise Timeout("signal %d / wall limit" % signum)

    if args.out != "-":
        args.out = os.path.abspath(args.out)
    signal.signal(signal.SIGTERM, on_sig)
    signal.signal(signal.SIGALRM, on_sig)
    signal.alarm(int(args.wall_limit))
    os.chdir(os.path.abspath(args.fcp_dir))
    sys.path.insert(0, os.getcwd())
    t0 = time.monotonic()
    try:
        from agent.Base_Agent import Base_Agent

        player = Base_Agent(args.host, args.port, args.mport, 1, args.robot_type, "FCPFalls",
                            False, False, True, True)
        w, r, b, scom = player.world, player.world.robot, player.behavior, player.scom

        def step(name):
            done = b.execute(name)
            scom.commit_and_send(r.get_command())
            scom.receive()
            return done

        def down():
            return bool(r.loc_head_z < 0.3 or r.imu_torso_inclination > 50)

        def standing():
            return bool(r.loc_head_z > 0.4 and r.imu_torso_inclination < 20)

        scom.unofficial_set_play_mode("PlayOn")
        scom.unofficial_move_ball((0, 8, 0.042))
        for d in directions:
            scom.unofficial_beam((-6, 0, r.beam_height), 0)
            for _ in range(75):
                step("Zero_Bent_Knees")
            entry = {"direction": d, "standing_before": standing()}
            fall_cycles = 0
            for fall_cycles in range(1, 301):
                step("Fall_" + d)
                if down():
                    break
            entry["fell"] = down()
            entry["fall_cycles"] = fall_cycles
            # FCP's Get_Up starts when its own test says the robot is down.
            settle = 0
            while entry["fell"] and not b.is_ready("Get_Up") and settle < 100:
                step("Zero")
                settle += 1
            done, gu = False, 0
            for gu in range(1, 601):
                if step("Get_Up"):
                    done = True
                    break
            for _ in range(50):
                step("Zero_Bent_Knees")
            entry.update({"get_up_finished": bool(done), "get_up_s": round(gu * 0.02, 2),
                          "head_z_after": round(float(r.loc_head_z), 3),
                          "inclination_after_deg": round(float(r.imu_torso_inclination), 1),
                          "standing_after": standing()})
            res["falls"].append(entry)
        player.terminate()
    except Timeout as e:
        res["error"] = "timeout: %s" % e
    except SystemExit as e:
        res["error"] = "SystemExit(%s) from FCP" % (e.code,)
    except BaseException as e:
        res["error"] = "".join(traceback.format_exception(type(e), e, e.__traceback__))[-2000:]
    finally:
        signal.alarm(0)
    res["wall_s"] = round(time.monotonic() - t0, 2)
    text = json.dumps(res, indent=1)
    if args.out == "-":
        print(text)
    else:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return 0 if res["error"] is None else 1


if __name__ == "__main__":
    sys.exit(main())
