#!/bin/bash
# Slurm Epilog (slurm.conf: Epilog=/etc/slurm/epilog.d/hpcdoctor.sh): the node's state after the job
# left it (ECC errors, remapped rows pending, a GPU still held), so a job that broke a GPU shows on
# the dashboard before the next job lands there. Never fails the epilog.
# hpcdoctor where this install puts it (or set HPCDOCTOR below):
#   python3 -m venv /opt/hpcdoctor && /opt/hpcdoctor/bin/pip install /path/to/hpcdoctor
# A problem (a textfile folder it cannot write) is one line on stderr, for slurmd's log.
TEXTFILE_DIR="${HPCDOCTOR_TEXTFILE_DIR:-/var/lib/node_exporter/textfile}"
HPCDOCTOR="${HPCDOCTOR:-/opt/hpcdoctor/bin/hpcdoctor}"
err=$(timeout 30 "$HPCDOCTOR" check --format prometheus --budget 15 --fail-on never \
    --output "$TEXTFILE_DIR/hpcdoctor.prom" 2>&1 >/dev/null) || [[ -n $err ]] || err="hpcdoctor did not finish"
[[ -z $err ]] || printf '%s\n' "${err:0:400}" >&2
exit 0
