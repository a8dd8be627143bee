#!/bin/bash
# Slurm HealthCheckProgram: hpcdoctor judges the node; this drains it with hpcdoctor's one-line
# reason, and resumes it once healthy again, but only when the drain was hpcdoctor's own (its reason
# begins "hpcdoctor:"): a node an admin drained stays drained, as LBNL NHC does it.
#
#   slurm.conf:  HealthCheckProgram=/etc/slurm/hpcdoctor-healthcheck.sh
#                HealthCheckInterval=300
#                HealthCheckNodeState=ANY
#
# hpcdoctor is expected where this install puts it (or set HPCDOCTOR in this file):
#   python3 -m venv /opt/hpcdoctor && /opt/hpcdoctor/bin/pip install /path/to/hpcdoctor
# Site expectations (GPU count, model, memory) come from /etc/hpcdoctor/config.toml.
#
# slurmd runs this as root with almost no environment (SLURMD_NODENAME only), so scontrol reads
# slurm.conf from its default place. Every command has a time limit: a hung driver or a slurmctld
# that does not answer never stalls slurmd. Problems of this script are one line on stderr.
set -u
HPCDOCTOR="${HPCDOCTOR:-/opt/hpcdoctor/bin/hpcdoctor}"
NODE="${SLURMD_NODENAME:-$(hostname -s)}"
SCONTROL_LIMIT="${SCONTROL_LIMIT:-10}"  # seconds for each scontrol call

say() { echo "hpcdoctor-healthcheck: $*" >&2; }

scontrol_or_say() {  # scontrol ARGS...: its stdout; on failure one line and a non-zero status
    local out rc
    out=$(timeout "$SCONTROL_LIMIT" scontrol "$@" 2>&1)
    rc=$?
    if [[ $rc -eq 124 ]]; then
        say "scontrol $1 did not answer within ${SCONTROL_LIMIT}s (node $NODE left as it is)"
    elif [[ $rc -ne 0 ]]; then
        say "scontrol $1 failed (exit $rc): ${out##*$'\n'}"
    else
        printf '%s\n' "$out"
    fi
    return $rc
}

out=$(timeout 40 "$HPCDOCTOR" nhc --budget 20 2>&1)
rc=$?
case $rc in
    0) reason="" ;;
    1) reason=$(grep -m1 '^hpcdoctor:' <<<"$out") || reason="${out%%$'\n'*}" ;;
    *) reason="hpcdoctor: could not run (exit $rc): ${out##*$'\n'}" ;;
esac

node=$(scontrol_or_say show node "$NODE") || exit 1
state=$(sed -n 's/^ *State=\([^ ]*\).*/\1/p' <<<"$node")
current=$(sed -n 's/^ *Reason=\(.*\) \[[^]]*\]$/\1/p' <<<"$node")

if [[ -z $reason ]]; then
    if [[ $state == *DRAIN* && $current == hpcdoctor:* ]]; then
        scontrol_or_say update nodename="$NODE" state=resume >/dev/null || exit 1
    fi
    exit 0
fi
if [[ $state == *DRAIN* && $current != hpcdoctor:* ]]; then
    exit 0  # drained by someone else: their reason stays
fi
if [[ $current != "$reason" ]]; then
    scontrol_or_say update nodename="$NODE" state=drain reason="$reason" >/dev/null || exit 1
fi
exit 0
