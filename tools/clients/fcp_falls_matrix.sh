#!/usr/bin/env bash
# fcp_falls.py for robot types 0-4, REPS runs each, a fresh server per run.
#   FCP_DIR=... [REF_PREFIX=... REF_TOOLS=.../ref_server.sh] fcp_falls_matrix.sh SERVER|ref TAG OUTDIR [REPS] [BASE_PORT]
# SERVER: a server binary with rcss3d's flags, or "ref" (the reference through
# REF_TOOLS, the ref_server.sh start/stop script). Then: fcp_falls_summary.py OUTDIR
set -u
SERVER=$1; TAG=$2; OUT=$3; REPS=${4:-2}; BASE=${5:-5600}
HERE=$(cd "$(dirname "$0")" && pwd)
FCP_PY=${FCP_PY:-$FCP_DIR/venv/bin/python}
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
for rep in $(seq 1 "$REPS"); do for t in 0 1 2 3 4; do
  AP=$((BASE + t + 10 * rep)); MP=$((BASE + 500 + t + 10 * rep)); base=$OUT/${TAG}_r${t}_${rep}
  if [ "$SERVER" = ref ]; then
    rm -rf "$base.ref"; "${REF_TOOLS:?set REF_TOOLS to ref_server.sh}" start "$REF_PREFIX" $AP $MP "$base.ref" > "$base.server.log" 2>&1
  else
    "$SERVER" --sync --no-user-config --bind 127.0.0.1 --agent-port $AP --monitor-port $MP > "$base.server.log" 2>&1 & SP=$!
    for _ in $(seq 1 50); do ss -ltn | grep -q ":$MP " && break; sleep 0.1; done
  fi
  timeout 400 "$FCP_PY" "$HERE/fcp_falls.py" --fcp-dir "$FCP_DIR" -p $AP -m $MP -r $t --out "$base.json" > "$base.out" 2>&1
  if [ "$SERVER" = ref ]; then "$REF_TOOLS" stop "$base.ref" > /dev/null 2>&1
  else kill -TERM $SP; for _ in $(seq 1 30); do kill -0 $SP 2>/dev/null || break; sleep 0.1; done; kill -KILL $SP 2>/dev/null; wait $SP 2>/dev/null; fi
done; done
