#!/usr/bin/env bash
# Record what MPI launchers and torch's rendezvous store really print when a rank dies of a signal
# or the store cannot form (issue 24), for triage to be tested on their own words. No GPU needed.
#
#   bench/cpu_emitters.sh OUTDIR     # needs mpirun.openmpi and mpiexec.hydra (Debian: openmpi-bin,
#                                    # mpich) and PYTHON=... naming an interpreter with torch
#
# A rank kills itself with the signal (kill -ILL $$), so the launcher's words are real and the
# cause is known: the recordings test reading the line and decoding the signal, not a diagnosis.
set -u
OUTDIR=${1:?usage: bench/cpu_emitters.sh OUTDIR}
PY=${PYTHON:-python3}
mkdir -p "$OUTDIR"
for sig in ILL SEGV BUS KILL; do
    OMPI_MCA_plm=isolated timeout 60 mpirun.openmpi --allow-run-as-root --oversubscribe -np 2 \
        bash -c 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then kill -'$sig' $$; fi; sleep 2' \
        > "$OUTDIR/openmpi-$sig.txt" 2>&1
    echo "openmpi $sig: rc=$?"
done
# Hydra reads its ranks' exit only after the signal is delivered: rank 1 waits a second first, or
# mpiexec can lose the race to its own control socket.
for sig in ILL SEGV; do
    timeout 60 mpiexec.hydra -np 2 bash -c 'if [ "$PMI_RANK" = 1 ]; then sleep 1; kill -'$sig' $$; fi; sleep 3' \
        > "$OUTDIR/mpich-$sig.txt" 2>&1
    echo "mpich $sig: rc=$?"
done
store='import datetime, os, sys, torch.distributed as dist
os.environ.setdefault("MASTER_ADDR", "127.0.0.1"); os.environ.setdefault("MASTER_PORT", "29531")
dist.init_process_group("gloo", rank=0, world_size=int(sys.argv[1]), timeout=datetime.timedelta(seconds=10))'
# world_size 2 with one rank started: the store waits for a client that never comes.
timeout 60 "$PY" -c "$store" 2 > "$OUTDIR/torch-store-clients-missing.txt" 2>&1
echo "torch store, 1 of 2 ranks: rc=$?"
# another process already listens on MASTER_PORT.
"$PY" - "$OUTDIR/torch-store-port-in-use.txt" "$store" <<'PYEOF'
import socket, subprocess, sys
s = socket.socket(); s.bind(("127.0.0.1", 29531)); s.listen()
r = subprocess.run(["timeout", "60", sys.executable, "-c", sys.argv[2], "1"], capture_output=True, text=True)
open(sys.argv[1], "w").write(r.stdout + r.stderr)
print("torch store, port held: rc=%d" % r.returncode)
PYEOF
mpirun.openmpi --version 2>&1 | head -1; mpiexec.hydra --version 2>&1 | sed -n 2p; "$PY" -c "import torch; print('torch', torch.__version__)"
