# Sourced by the lease scripts (gpu_record.sh, gpu_lease_emitters.sh) after they set OUTDIR: their
# log and their timed, time-limited steps, so a hung step costs its own limit and not the lease.
mkdir -p "$OUTDIR"
exec > >(tee -a "$OUTDIR/session.log") 2>&1
TIMEFORMAT='%R s'

step() {  # step SECONDS NAME COMMAND...: run with a limit, log its wall time and exit status
    local limit=$1 name=$2 rc
    shift 2
    echo "== $(date -u +%T) $name"
    time timeout -k 5 "$limit" "$@"
    rc=$?
    echo "== $name: rc=$rc"
}
