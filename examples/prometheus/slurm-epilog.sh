#!/bin/bash
# Slurm Epilog (slurm.conf: Epilog=/etc/slurm/epilog.d/hpcdoctor.sh): the node's state after the job
# left it (ECC errors, remapped rows pending, a GPU still held), so a job that broke a GPU shows on
# the dashboard before the next job lands there. Never fails the epilog.
TEXTFILE_DIR="${HPCDOCTOR_TEXTFILE_DIR:-/var/lib/node_exporter/textfile}"
HPCDOCTOR="${HPCDOCTOR:-/usr/local/bin/hpcdoctor}"
timeout 30 "$HPCDOCTOR" check --format prometheus --budget 15 --fail-on never \
    --output "$TEXTFILE_DIR/hpcdoctor.prom" >/dev/null 2>&1 || true
exit 0
