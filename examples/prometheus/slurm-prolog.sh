#!/bin/bash
# Slurm Prolog (slurm.conf: Prolog=/etc/slurm/prolog.d/hpcdoctor.sh): refresh the node's metrics
# as a job starts, under a hard budget, without ever failing the prolog (a failing prolog drains
# the node; draining is the health check's decision: see examples/slurm-healthcheck.sh).
# The metrics judge the node, not the starting job: --format prometheus sets the job's variables
# aside, so they match the timer's (hpcdoctor-textfile.timer) between jobs.
# hpcdoctor where this install puts it (or set HPCDOCTOR below):
#   python3 -m venv /opt/hpcdoctor && /opt/hpcdoctor/bin/pip install /path/to/hpcdoctor
# A problem (a textfile folder it cannot write) is one line on stderr, for slurmd's log.
TEXTFILE_DIR="${HPCDOCTOR_TEXTFILE_DIR:-/var/lib/node_exporter/textfile}"
HPCDOCTOR="${HPCDOCTOR:-/opt/hpcdoctor/bin/hpcdoctor}"
err=$(timeout 30 "$HPCDOCTOR" check --format prometheus --budget 15 --fail-on never \
    --output "$TEXTFILE_DIR/hpcdoctor.prom" 2>&1 >/dev/null) || [[ -n $err ]] || err="hpcdoctor did not finish"
[[ -z $err ]] || printf '%s\n' "${err:0:400}" >&2
exit 0
