#!/usr/bin/env bash
# A short lease late in the project (issue 24's sessions change triage, not the live paths): the
# current code's live paths on a GPU node once more (check, its JSON, nhc, a redacted snapshot and its
# replay), so that two days of rule changes are seen to read a real GPU node, then the emitter cases
# named on the command line (bench/gpu_emitters.py), kept as OUTDIR/emitters.tar.gz.
#
#   bench/gpu_lease_recheck.sh OUTDIR [CASE...]   # PYTHON=... names the interpreter with CUDA torch
set -u
OUTDIR=${1:?usage: bench/gpu_lease_recheck.sh OUTDIR [CASE...]}
shift
PY=${PYTHON:-python3}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lease_steps.sh"
HD=("$PY" -m hpcdoctor)
step 20 "node" bash -c "nvidia-smi -L; nvidia-smi --query-gpu=driver_version,memory.used,memory.total --format=csv; uname -r; $PY -c 'import torch; print(torch.__version__, torch.version.cuda)'; ${HD[*]} --version"
for run in 1 2; do step 20 "check $run" "${HD[@]}" check --python "$PY" --fail-on never; done
step 20 "check --format json" bash -c "${HD[*]} check --python '$PY' --format json --fail-on never > '$OUTDIR/check.json'"
step 20 "nhc" "${HD[@]}" nhc --python "$PY"
step 20 "check --quiet" "${HD[@]}" check --quiet --python "$PY"
step 90 "snapshot --redact --bench quick" "${HD[@]}" snapshot --redact --bench quick --python "$PY" "$OUTDIR/snapshot.tar.gz"
step 20 "replay" bash -c "${HD[*]} check --from '$OUTDIR/snapshot.tar.gz' --fail-on never > '$OUTDIR/replay.txt'"
if [ "$#" -gt 0 ]; then
    step 200 "emitters" "$PY" "$HERE/gpu_emitters.py" "$OUTDIR/emitters" "$@"
    tar czf "$OUTDIR/emitters.tar.gz" -C "$OUTDIR" emitters && rm -rf "$OUTDIR/emitters"
fi
echo "== $(date -u +%T) done"
