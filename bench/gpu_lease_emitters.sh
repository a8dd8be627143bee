#!/usr/bin/env bash
# One short lease (issue 24): the current code's live paths on a GPU node, a new redacted snapshot,
# then the emitters' own messages (bench/gpu_emitters.py), then `check` again, which must read the
# Xids that the faulting kernels raised from the live kernel log.
#
#   bench/gpu_lease_emitters.sh OUTDIR     # PYTHON=... names the interpreter with CUDA torch
#
# OUTDIR gets session.log, snapshot.tar.gz, emitters.tar.gz and the JSON reports: few files, since
# the lease returns at most eight.
set -u
OUTDIR=${1:?usage: bench/gpu_lease_emitters.sh OUTDIR}
PY=${PYTHON:-python3}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lease_steps.sh"
HD=("$PY" -m hpcdoctor)
step 20 "node" bash -c "nvidia-smi -L; uname -r; $PY -c 'import torch; print(torch.__version__, torch.version.cuda)'; ${HD[*]} --version"
for run in 1 2 3; do step 20 "check $run" "${HD[@]}" check --python "$PY" --fail-on never; done
step 20 "check --format json (before)" bash -c "${HD[*]} check --python '$PY' --format json --fail-on never > '$OUTDIR/check-before.json'"
step 20 "nhc" "${HD[@]}" nhc --python "$PY"
step 90 "snapshot --redact --bench quick" "${HD[@]}" snapshot --redact --bench quick --python "$PY" "$OUTDIR/snapshot.tar.gz"
step 20 "replay" "${HD[@]}" check --from "$OUTDIR/snapshot.tar.gz" --fail-on never
step 420 "emitters" "$PY" "$HERE/gpu_emitters.py" "$OUTDIR/emitters"
tar czf "$OUTDIR/emitters.tar.gz" -C "$OUTDIR" emitters && rm -rf "$OUTDIR/emitters"
step 20 "check after the faults" "${HD[@]}" check --python "$PY" --fail-on never
step 20 "check --format json (after)" bash -c "${HD[*]} check --python '$PY' --format json --fail-on never > '$OUTDIR/check-after.json'"
echo "== $(date -u +%T) done"
