#!/usr/bin/env bash
# Everything a short lease of one NVIDIA GPU node is spent on (issue 18), in one run, so that a
# lease of a quarter of an hour is enough: the live paths of `check`, a redacted snapshot with the
# full benchmarks (a new fixture), the acceptance table against references from the same run, a
# snapshot while another process holds and loads the GPU, two benchmarks at once (the per-GPU
# lock), and every CUDA error string the node's libraries print.
#
#   bench/gpu_session.sh OUTDIR        # PYTHON=... to name the interpreter with CUDA torch
#
# Each step has its own time limit, so a hung one costs its limit and not the lease; OUTDIR gets
# session.log and one .tar.gz per recording. Installs nothing.
set -u
OUTDIR=${1:?usage: bench/gpu_session.sh OUTDIR}
PY=${PYTHON:-python3}
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d)
mkdir -p "$OUTDIR" "$W/live"
exec > >(tee -a "$OUTDIR/session.log") 2>&1

step() {  # step SECONDS NAME COMMAND...: run with a limit, log its time and exit status
    local limit=$1 name=$2 start rc
    shift 2
    start=$(date +%s%N)
    echo "== $(date -u +%T) $name"
    timeout -k 5 "$limit" "$@"
    rc=$?
    echo "== $name: rc=$rc in $(( ($(date +%s%N) - start) / 1000000 )) ms"
    # What ran so far comes back even when a later step outlives the lease.
    tar czf "$OUTDIR/live.tar.gz" -C "$W" live
}
HD=("$PY" -m hpcdoctor)

step 20 "node" bash -c "nvidia-smi; nvidia-smi -q -x > '$W/live/nvsmi_qx.xml'; uname -a; $PY -c 'import torch, sys; print(sys.version); print(torch.__version__, torch.version.cuda, torch.cuda.is_available())'; $PY -m hpcdoctor --version"
step 20 "check (first, cold caches)" "${HD[@]}" check --python "$PY"
step 20 "check --format json" bash -c "$PY -m hpcdoctor check --python '$PY' --format json --fail-on never > '$W/live/check.json'"
step 45 "check --deep" bash -c "$PY -m hpcdoctor check --deep --python '$PY' --format markdown --fail-on never | tee '$W/live/deep.md'"
step 20 "nhc" "${HD[@]}" nhc --python "$PY"
step 20 "check --quiet" "${HD[@]}" check --quiet --python "$PY"
step 20 "cuda error strings" bash -c "'$PY' '$HERE/cuda_error_strings.py' > '$OUTDIR/cuda_error_strings.json'"
step 150 "snapshot --redact --bench full" "${HD[@]}" snapshot --redact --bench full --python "$PY" "$OUTDIR/node-redacted-bench-full.tar.gz"
step 20 "replay of that snapshot" "${HD[@]}" check --from "$OUTDIR/node-redacted-bench-full.tar.gz" --fail-on never
step 280 "gpu_acceptance" "$PY" "$HERE/gpu_acceptance.py" --python "$PY" --out "$W/live/acceptance"

# Another process holds 20 GiB and keeps the GPU busy for 90 s: the snapshot must say so
# (gpu-memory-in-use) and the benchmark must not call a healthy but shared card slow unexplained.
"$PY" "$HERE/gpu_hog.py" 90 &
HOG=$!
sleep 10
step 80 "snapshot while another process holds the GPU" "${HD[@]}" snapshot --redact --bench quick --python "$PY" "$OUTDIR/node-busy-redacted.tar.gz"
kill "$HOG" 2>/dev/null; wait "$HOG" 2>/dev/null

# The per-GPU lock: two benchmarks started together must not time each other's kernels.
step 60 "two benchmarks at once" bash -c "
  $PY -m hpcdoctor check --bench quick --python '$PY' --format json --fail-on never > '$W/live/bench-a.json' 2> '$W/live/bench-a.err' &
  $PY -m hpcdoctor check --bench quick --python '$PY' --format json --fail-on never > '$W/live/bench-b.json' 2> '$W/live/bench-b.err'
  wait; tail -n 5 '$W/live/bench-a.err' '$W/live/bench-b.err'"

step 40 "check_time" "$PY" "$HERE/check_time.py" --runs 9 --json-out "$W/live/check_time.json" -- --python "$PY"
echo "== $(date -u +%T) done"
