#!/usr/bin/env bash
# One short lease (issue 24): the environment faults of bench/gpu_env_emitters.py on a GPU node,
# with the current code's live check before them and inside each fault's namespace.
#
#   bench/gpu_lease_env.sh OUTDIR [CASE...]   # as root; PYTHON=... names the interpreter with CUDA torch
#
# OUTDIR gets session.log, env.tar.gz (one .txt per case and manifest.json) and check.json.
set -u
OUTDIR=${1:?usage: bench/gpu_lease_env.sh OUTDIR}
PY=${PYTHON:-$(command -v python3)}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lease_steps.sh"
HD=("$PY" -m hpcdoctor)
step 30 "node" bash -c "nvidia-smi -L; uname -r; id; ls -l /dev/nvidia*; ldconfig -p | grep -E 'libcuda|nvidia-ml|ptxjit|nvrtc|cudnn'; ls /usr/local/cuda*/lib64/stubs /usr/local/cuda*/targets/*/lib/stubs 2>&1 | head; which nvcc; ls -ld '$PY' \"\$(dirname '$PY')\" /opt /opt/torch 2>&1; $PY -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())'; ${HD[*]} --version; nvidia-smi -h | grep -n -A4 -E '^ +-r[ ,]|--gpu-reset'"
for run in 1 2 3; do step 20 "check $run" "${HD[@]}" check --python "$PY" --fail-on never; done
step 20 "check --format json" bash -c "${HD[*]} check --python '$PY' --format json --fail-on never > '$OUTDIR/check.json'"
export PYTHON="$PY"
step 420 "environment faults" "$PY" "$HERE/gpu_env_emitters.py" "$OUTDIR/env" "${@:2}"
tar czf "$OUTDIR/env.tar.gz" -C "$OUTDIR" env && rm -rf "$OUTDIR/env"
echo "== $(date -u +%T) done"
