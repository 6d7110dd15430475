#!/usr/bin/env bash
# GPU check for the rerun harness (issue 5): install the gpu extra, run `wb doctor --json`,
# then a 3-round rerun plan with the bundled GPU workload and a 10 % slowdown.
# Meant to finish in under 5 minutes on one NVIDIA GPU. Writes its results to $OUT
# (default: a temporary directory) and prints a summary.
#
#   bash bench/gpu_check.sh            # from the repository root
#   OUT=/tmp/gpu-check bash bench/gpu_check.sh
#   GEMM=4096 REPEAT=20 STEPS=30 bash bench/gpu_check.sh   # other sizes
set -uo pipefail

cd "$(dirname "$0")/.."
REPO=$(pwd)
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
START=$(date +%s)
log() { printf '[gpu_check %3ss] %s\n' "$(( $(date +%s) - START ))" "$*"; }

# 1. Python with wb and the gpu extra (cupy-cuda12x). Reuse .venv when it exists.
PY=${PYTHON:-}
if [ -z "$PY" ]; then
  if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else
    python3 -m venv "$OUT/venv" && PY="$OUT/venv/bin/python"
  fi
fi
log "python: $PY ($($PY --version 2>&1))"
if ! $PY -c 'import cupy' 2>/dev/null; then
  log "installing the gpu extra"
  $PY -m pip install -q -e ".[gpu]" 2>&1 | tail -3 || true
fi
if ! $PY -c 'import workbench' 2>/dev/null; then
  $PY -m pip install -q -e . 2>&1 | tail -3 || true
fi
$PY -c 'import cupy; print("cupy", cupy.__version__, "CUDA runtime", cupy.cuda.runtime.runtimeGetVersion())' 2>&1 | tee "$OUT/cupy.txt"
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.applications.graphics,power.limit,persistence_mode,mig.mode.current \
  --format=csv 2>&1 | tee "$OUT/nvidia-smi.csv" || true

# 2. The preflight this machine reports.
log "wb doctor"
$PY -m workbench doctor | tee "$OUT/doctor.txt"
$PY -m workbench doctor --json > "$OUT/doctor.json"
log "doctor --json: $(wc -c < "$OUT/doctor.json") bytes"

# 3. A 3-round plan: A and A' the baseline GEMM, B with K grown by 10 %.
export WB_STORE="$OUT/wb.sqlite"
W="$REPO/captures/workloads/gpu_workload.py"
G=${GEMM:-8192}   # GEMM side; fp16 8192^3 is about 1.1 TFLOP, a few ms on a datacenter GPU
ARGS="\"--m\", \"$G\", \"--n\", \"$G\", \"--k\", \"$G\", \"--dtype\", \"float16\", \"--repeat\", \"${REPEAT:-10}\", \"--steps\", \"${STEPS:-30}\", \"--warmup\", \"5\""
cat > "$OUT/plan.toml" <<TOML
name = "gpu-check-gemm-10pct"
lens = "training"
rounds = 3
seed = 20261130
timeout_s = 120

[baseline]
argv = ["$PY", "$W", $ARGS]

[candidate]
argv = ["$PY", "$W", $ARGS, "--slowdown", "10"]

[[artifacts]]
path = "$W"
role = "source"
TOML
$PY -m workbench rerun plan --from-file "$OUT/plan.toml" || exit 1
$PY -m workbench rerun run gpu-check-gemm-10pct --dry-run > "$OUT/dry-run.txt"; cat "$OUT/dry-run.txt" | tail -8
log "running 9 runs"
timeout 240 $PY -m workbench rerun run gpu-check-gemm-10pct --workdir "$OUT/work" --json > "$OUT/comparison.json"
RC=$?
log "wb rerun run exit status $RC"
$PY -m workbench rerun report gpu-check-gemm-10pct | tee "$OUT/report.txt"
$PY - "$OUT/comparison.json" <<'PYEOF'
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except Exception as exc:  # noqa: BLE001
    sys.exit(f"no comparison: {exc}")
a = doc.get("analysis") or {}
print("verdict", doc.get("verdict"), "flags", doc.get("flags"))
print("B/A ratio", a.get("ratio"), "A'/A", (a.get("aa") or {}).get("ratio"))
for r in doc["runs"]:
    print(f"  round {r['round']} {r['arm']:<2} {r['status']:<6} step_ms={r['statistic']} wall={r['wall_s']}")
PYEOF
log "done; results in $OUT"
exit $RC
