"""Slurm's refusal of a job array (knowledge/messages/slurm.toml ESLURM_INVALID_ARRAY), read beside
the array the paste asks for (slurm_array.toml): the highest index against MaxArraySize."""

from __future__ import annotations

import re
from typing import Iterator, Optional, Tuple

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "slurm-array-exceeds-max-array-size"
_REFUSAL = "slurm:ESLURM_INVALID_ARRAY"
_TOKEN = re.compile(r"(\d+)(?:-(\d+))?(?::(\d+))?$")

_CONFIG = ("scontrol show config | grep -iE 'MaxArraySize|max_array_tasks'   # indices must stay below MaxArraySize; "
           "SchedulerParameters=max_array_tasks caps the count of one array")


def _span(spec: str) -> Optional[Tuple[int, int, int]]:
    """(lowest index, highest index, task count) of an --array spec, or None if it does not parse."""
    low, top, count = None, -1, 0
    for tok in spec.split(","):
        m = _TOKEN.match(tok)
        if not m:
            return None
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        step = int(m.group(3) or 1)
        if hi < lo or step < 1:
            return None
        low = lo if low is None else min(low, lo)
        top, count = max(top, hi), count + (hi - lo) // step + 1
    return low, top, count


@rule("ENV132", SYMBOL, "error", "a job array's indices reach past the cluster's MaxArraySize", impact=5,
      also={"info": "Slurm refused a job array and the paste does not show which limit it passed"})
def slurm_array_exceeds_max_array_size(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        Slurm's "Batch job submission failed: Invalid job array specification" (ESLURM_INVALID_ARRAY)
        beside the array the paste asks for (#SBATCH -a/--array, or sbatch's option): an error when
        its highest index is at or above Slurm's default MaxArraySize (1001: indices 0-1000), info
        naming the causes otherwise.

    Why it matters:
        slurmctld allocates an array's index bitmap MaxArraySize wide, so an index at or above it
        refuses the whole submission, however few tasks it names; SchedulerParameters=max_array_tasks
        caps the count of tasks separately, and MaxArraySize=0 disables arrays. Users size arrays
        from their input (one task per line of a file) and meet the limit without knowing it exists.

    How to fix:
        Read the cluster's MaxArraySize and max_array_tasks (scontrol show config), and submit the
        work as several arrays whose indices stay below it, each with an offset the script adds to
        SLURM_ARRAY_TASK_ID.

    References:
        - https://slurm.schedmd.com/slurm.conf.html#OPT_MaxArraySize
        - https://slurm.schedmd.com/job_array.html
        - https://github.com/SchedMD/slurm/blob/master/src/slurmctld/job_mgr.c (_valid_array_inx)
        - https://github.com/esolares/HapSolo/issues/1 (an array of 20,876 tasks refused)
    """
    told = catalogued(f, SYMBOL)
    refusal = next((s for s in told if s.get("id") == _REFUSAL), None)
    if refusal is None:
        return
    quote = f"(line {refusal.get('line')}: \"{told_text(refusal)}\")"
    limit = int(knowledge.load("thresholds")["slurm_array"]["default_max_array_size"])
    asked = next((s for s in told if s.get("id") == "slurm_array:array-request"), None)
    span = _span(str(asked.get("spec"))) if asked else None
    if span and span[1] >= limit:
        low, top, count = span
        chunk = limit - 1
        yield Hit(message=(f"Slurm refused the job array {quote}: it asks for indices up to {top} ({count} tasks, line "
                           f"{asked.get('line')}), and Slurm's default MaxArraySize of {limit} allows indices 0-{chunk} "
                           "only; the cluster's own MaxArraySize decides"),
                  fix="\n".join([
                      _CONFIG,
                      f"for off in $(seq {low} {chunk} {top}); do sbatch --array=0-{chunk - 1} --export=ALL,OFFSET=$off "
                      f"job.sh; done   # job.sh: your batch script; it works on task $((SLURM_ARRAY_TASK_ID + OFFSET)) "
                      f"and exits above {top}; {chunk} tasks per array fit the default MaxArraySize ({limit}): use the "
                      "value printed above where it differs"]),
                  evidence={**told_evidence(refusal), "array": asked.get("spec")})
        return
    shown = f" (it asks for {asked.get('spec')}, line {asked.get('line')})" if asked else ""
    yield Hit(message=(f"Slurm refused the job array {quote}{shown}: an index at or above MaxArraySize (default {limit}), "
                       "more tasks than max_array_tasks, a malformed range, arrays disabled (MaxArraySize=0), or an "
                       "array asked of salloc, srun or a heterogeneous job"),
              fix=_CONFIG, evidence=told_evidence(refusal), severity="info")
