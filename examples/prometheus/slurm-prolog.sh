#!/bin/bash
# Slurm Prolog (slurm.conf: Prolog=/etc/slurm/prolog.d/hpcdoctor.sh): refresh the node's metrics
# as a job starts, under a hard budget, without ever failing the prolog (a failing prolog drains
# the node; draining is the health check's decision: see examples/hpcdoctor.nhc).
TEXTFILE_DIR="${HPCDOCTOR_TEXTFILE_DIR:-/var/lib/node_exporter/textfile}"
HPCDOCTOR="${HPCDOCTOR:-/usr/local/bin/hpcdoctor}"
timeout 30 "$HPCDOCTOR" check --format prometheus --budget 15 --fail-on never \
    --output "$TEXTFILE_DIR/hpcdoctor.prom" >/dev/null 2>&1 || true
exit 0
