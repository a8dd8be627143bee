#!/usr/bin/env bash
# The short lease: record one more GPU kind (an H200 after the H100 of issue 18) in one run that
# fits a few minutes of device time. Facts as nvidia-smi and collect_env see them, `check` timed
# cold and warm, `--deep`, a redacted snapshot with the full benchmarks (the new fixture), its
# replay, and the CUDA error strings of this node's libraries.
#
#   bench/gpu_record.sh OUTDIR        # PYTHON=... to name the interpreter with CUDA torch; MORE=1 below
set -u
OUTDIR=${1:?usage: bench/gpu_record.sh OUTDIR}
PY=${PYTHON:-python3}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lease_steps.sh"

step 30 "node" bash -c "nvidia-smi; nvidia-smi -q -x > '$OUTDIR/nvsmi_qx.xml'; nvidia-smi topo -m; uname -a; nproc; $PY -c 'import torch, sys; print(sys.version); print(torch.__version__, torch.version.cuda, torch.cuda.is_available(), torch.cuda.get_device_name(0))'; $PY -m hpcdoctor --version"
for run in 1 2 3 4 5; do
    step 20 "check $run" bash -c "$PY -m hpcdoctor check --python '$PY' --fail-on never > '$OUTDIR/check$run.txt'"
done
step 20 "check --format json" bash -c "$PY -m hpcdoctor check --python '$PY' --format json --fail-on never > '$OUTDIR/check.json'"
step 60 "check --deep" bash -c "$PY -m hpcdoctor check --deep --python '$PY' --format markdown --fail-on never > '$OUTDIR/deep.md'"
step 60 "collect_env" bash -c "$PY -m torch.utils.collect_env > '$OUTDIR/collect_env.txt'"
step 20 "cuda error strings" bash -c "'$PY' '$HERE/cuda_error_strings.py' > '$OUTDIR/cuda_error_strings.json'"
step 170 "snapshot --redact --bench full" "$PY" -m hpcdoctor snapshot --redact --bench full --python "$PY" "$OUTDIR/node-redacted-bench-full.tar.gz"
step 20 "replay of that snapshot" bash -c "$PY -m hpcdoctor check --from '$OUTDIR/node-redacted-bench-full.tar.gz' --fail-on never > '$OUTDIR/replay.txt'"

# MORE=1: the acceptance table against references from the same run, and a snapshot while another
# process holds and loads the GPU (the conditions the NVML watch must report).
if [ "${MORE:-0}" = 1 ]; then
    step 280 "gpu_acceptance" "$PY" "$HERE/gpu_acceptance.py" --python "$PY" --out "$OUTDIR/acceptance"
    "$PY" "$HERE/gpu_hog.py" 75 &
    HOG=$!
    sleep 10
    step 60 "snapshot while another process holds the GPU" "$PY" -m hpcdoctor snapshot --redact --bench quick --python "$PY" "$OUTDIR/node-busy-redacted.tar.gz"
    kill "$HOG" 2>/dev/null; wait "$HOG" 2>/dev/null
fi
echo "== $(date -u +%T) done"
