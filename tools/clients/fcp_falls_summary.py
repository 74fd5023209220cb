#!/usr/bin/env python3
"""Tabulates fcp_falls_matrix.sh outputs: standing after the get-up, per tag,
robot type and fall direction.  usage: fcp_falls_summary.py OUTDIR"""
import collections, glob, json, os, re, sys

rows = collections.defaultdict(lambda: [0, 0])
times = collections.defaultdict(list)
errors = collections.Counter()
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    m = re.match(r"(.+)_r(\d)_\d+\.json$", os.path.basename(path))
    if not m:
        continue
    tag, t = m.group(1), int(m.group(2))
    doc = json.load(open(path))
    if doc.get("error"):
        errors[tag] += 1
    for f in doc.get("falls", []):
        key = (tag, t, f["direction"])
        rows[key][1] += 1
        rows[key][0] += bool(f.get("standing_after"))
        if f.get("get_up_finished"):
            times[(tag, f["direction"])].append(f["get_up_s"])
tags = sorted({k[0] for k in rows})
dirs = ["Front", "Back", "Left", "Right"]
print("| tag | direction | t0 | t1 | t2 | t3 | t4 | all | get-up s (median) |")
print("|---|---|---|---|---|---|---|---|---|")
for tag in tags:
    for d in dirs:
        cells, s, n = [], 0, 0
        for t in range(5):
            a, b = rows.get((tag, t, d), (0, 0))
            cells.append("%d/%d" % (a, b))
            s += a; n += b
        ts = sorted(times[(tag, d)])
        med = "%.2f" % ts[len(ts) // 2] if ts else "-"
        print("| %s | %s | %s | %d/%d | %s |" % (tag, d, " | ".join(cells), s, n, med))
for tag, n in errors.items():
    print("%s: %d run(s) ended with an error" % (tag, n))
