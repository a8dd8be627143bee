#!/usr/bin/env bash
# One short lease: the rules that read the job's environment against the live node, on a GPU node.
# A variable that hides the GPU (CUDA_VISIBLE_DEVICES), a misspelt allocator key
# (PYTORCH_CUDA_ALLOC_CONF) and NCCL_NET=IB on a node without RDMA must each give their error live;
# the plain check must give none of them; `snapshot --redact --bench quick` must leave no UUID of
# the GPU in any file, in either form (GPU-<uuid> as NVML prints it, bare as torch does).
#
#   bench/gpu_live_env.sh OUTDIR       # PYTHON=... names the interpreter with CUDA torch
set -u
OUTDIR=${1:?usage: bench/gpu_live_env.sh OUTDIR}
PY=${PYTHON:-python3}
mkdir -p "$OUTDIR"
exec > >(tee -a "$OUTDIR/session.log") 2>&1
check() {  # check NAME VAR=VALUE...: one live check in JSON with the variables set
    local name=$1
    shift
    echo "== $(date -u +%T) $name: $*"
    env "$@" timeout -k 5 30 "$PY" -m hpcdoctor check --python "$PY" --format json --fail-on never > "$OUTDIR/$name.json"
    echo "rc=$?"
    "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print([(f['code'], f['symbol'], f['severity'], f['message'][:160]) for f in d['findings']])" "$OUTDIR/$name.json"
}
check plain
check visible-empty CUDA_VISIBLE_DEVICES=
check visible-index CUDA_VISIBLE_DEVICES=3
check visible-uuid CUDA_VISIBLE_DEVICES=GPU-00000000-0000-0000-0000-000000000000
check visible-first-bad CUDA_VISIBLE_DEVICES=5,0
check alloc-conf PYTORCH_CUDA_ALLOC_CONF=expandable_segment:True
check nccl-net NCCL_NET=IB
echo "== $(date -u +%T) snapshot --redact --bench quick"
timeout -k 5 90 "$PY" -m hpcdoctor snapshot --redact --bench quick --python "$PY" "$OUTDIR/snapshot.tar.gz"
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1)
mkdir -p /tmp/snapcheck && tar xzf "$OUTDIR/snapshot.tar.gz" -C /tmp/snapcheck
echo "GPU uuid files, prefixed: $(grep -rl "$uuid" /tmp/snapcheck | wc -l); bare: $(grep -rl "${uuid#GPU-}" /tmp/snapcheck | wc -l)"
grep -rho '"uuid": *"[^"]*"' /tmp/snapcheck | sort | uniq -c
echo "== $(date -u +%T) done"
