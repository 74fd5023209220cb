#!/usr/bin/env python3
"""Replays the reference gaits on the ODE replica and prints each
replay's outcome and its torso distance to the reference's trace, or,
with --nudges N, every gait's outcome as a pass rate over N nudged
replays (the scheme of `gait_replay --nudges`: replay k raises leg joint
k mod 12 -- lle1..lle6, rle1..rle6 -- by +SPEED rad/s, the other sign
for the second dozen, for the one step 40).

    outcomes.py REPLICA MODEL_DIR GAITS_DIR [--nudges N] [--nudge-speed S]
                [--only PREFIX] [-- replica options...]

The outcome criteria are the gait acceptance's: a walk passes when it
does not fall (torso centre below 0.25 m) and walks at least 85 % of the
reference's distance, a get-up when it ends upright (torso above 0.3 m,
up axis z above 0.85), a kick when the ball moves at least half the
reference's distance.
"""
import csv
import io
import math
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache

LEGS = ['lle1', 'lle2', 'lle3', 'lle4', 'lle5', 'lle6',
        'rle1', 'rle2', 'rle3', 'rle4', 'rle5', 'rle6']
FALL_Z = 0.25


def rows_of(text):
    return list(csv.DictReader(io.StringIO(text)))


def analyse(ref, ours):
    n = min(len(ref), len(ours))
    pos = lambda r: tuple(float(r[k]) for k in ('torso_x', 'torso_y', 'torso_z'))
    ball = lambda r: (float(r['ball_x']), float(r['ball_y']))
    fall = next(((i + 1) * 0.02 for i in range(n) if pos(ours[i])[2] < FALL_Z), None)
    err = {s: math.dist(pos(ours[s - 1]), pos(ref[s - 1])) for s in (50, 100, 150, 200) if s <= n}
    return {
        'walked': math.dist(pos(ours[0])[:2], pos(ours[n - 1])[:2]),
        'ref_walked': math.dist(pos(ref[0])[:2], pos(ref[n - 1])[:2]),
        'fall': fall,
        'ball': math.dist(ball(ours[0]), ball(ours[n - 1])),
        'ref_ball': math.dist(ball(ref[0]), ball(ref[n - 1])),
        'end_z': pos(ours[n - 1])[2],
        'end_up': float(ours[n - 1]['r22']),
        'err': err,
    }


def outcome(name, a):
    """(passes, ratio to the reference's distance)"""
    if name.startswith('g_walk'):
        r = a['walked'] / a['ref_walked']
        return a['fall'] is None and r >= 0.85, r
    if name.startswith('g_getup'):
        return a['end_z'] > 0.3 and a['end_up'] > 0.85, a['walked'] / max(a['ref_walked'], 1e-9)
    r = a['ball'] / a['ref_ball']
    return r >= 0.5, r


def main():
    args = sys.argv[1:]
    extra = []
    if '--' in args:
        i = args.index('--')
        args, extra = args[:i], args[i + 1:]
    nudges, speed, only = 0, 0.05, 'g_'
    pos = []
    it = iter(args)
    for a in it:
        if a == '--nudges':
            nudges = int(next(it))
        elif a == '--nudge-speed':
            speed = float(next(it))
        elif a == '--only':
            only = next(it)
        else:
            pos.append(a)
    replica, model_dir, gaits = pos
    names = sorted(f[:-len('.sent.txt')] for f in os.listdir(gaits)
                   if f.endswith('.sent.txt') and f.startswith(only))

    def model(name):
        return os.path.join(model_dir, f'model_t{name[-1]}.txt')

    @lru_cache(maxsize=None)
    def joint_index(name, eff):
        joints = [l.split()[1] for l in open(model(name)) if l.startswith('J')]
        return joints.index(eff)

    def replay(name, k):
        cmd = [replica, model(name), os.path.join(gaits, name + '.sent.txt')] + extra
        if k is not None:
            sign = 1 if (k // 12) % 2 == 0 else -1
            cmd += ['--nudge', '40', str(joint_index(name, LEGS[k % 12])), str(sign * speed)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        with open(os.path.join(gaits, name + '.csv')) as f:
            ref = list(csv.DictReader(f))
        return analyse(ref, rows_of(out))

    with ThreadPoolExecutor(os.cpu_count() or 2) as ex:
        if nudges == 0:
            print('| scenario | passes | ratio | fall s | torso error 1 / 2 / 3 / 4 s, cm |')
            print('|---|---|---|---|---|')
            for name, a in zip(names, ex.map(lambda n: replay(n, None), names)):
                ok, r = outcome(name, a)
                errs = ' / '.join(f"{a['err'][s] * 100:.2f}" if s in a['err'] else '-'
                                  for s in (50, 100, 150, 200))
                fall = f"{a['fall']:.2f}" if a['fall'] else '-'
                print(f'| {name} | {"yes" if ok else "no"} | {r:.2f} | {fall} | {errs} |')
            return
        print(f'| scenario | passed of {nudges} | mean ratio | range |')
        print('|---|---|---|---|')
        kinds = {}
        for name in names:
            res = list(ex.map(lambda k: outcome(name, replay(name, k)), range(nudges)))
            passed = sum(1 for ok, _ in res if ok)
            ratios = [r for _, r in res]
            mean = sum(ratios) / nudges
            print(f'| {name} | {passed} | {mean:.3f} | {min(ratios):.2f}-{max(ratios):.2f} |', flush=True)
            k = kinds.setdefault(name.split('_')[1], [0, 0, 0.0])
            k[0] += passed
            k[1] += nudges
            k[2] += mean * nudges
        for kind, (p, n, s) in kinds.items():
            print(f'{kind}: {p}/{n} pass, mean ratio {s / n:.3f}')


if __name__ == '__main__':
    main()
