"""A process killed at its file-size limit (SIGXFSZ: ulimit -f, RLIMIT_FSIZE), which a shell, a
scheduler's exit status or Slurm's ExitCode reports (knowledge/messages/signals.toml,
slurm_exit.toml, pbs_exit.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "file-size-limit-exceeded"

_SAYS = {"signals": "the shell reports SIGXFSZ", "slurm_exit": "Slurm's ExitCode is signal 25, SIGXFSZ",
         "pbs_exit": "PBS's exit status 281 is 256+25, SIGXFSZ"}

_FIX = {
    "slurm_exit": "ulimit -Sf; ulimit -Hf   # on the host you submit from: a file-size limit there (in 1024-byte blocks) "
                  "goes with the job\n"
                  "scontrol show config | grep -i PropagateResourceLimits   # which of the submitting shell's limits Slurm "
                  "carries (ALL by default, FSIZE among them)\n"
                  "sbatch --propagate=NONE job.sh   # submit without the login node's limits; or ulimit -Sf unlimited in the "
                  "script before the program",
    "pbs_exit": "qstat -f $PBS_JOBID | grep -E 'Resource_List.(p?file)'   # a per-file size limit the job was given "
                "(tracejob JOBID once it ended)\n"
                "qsub -l file=200gb job.sh   # PBS's largest file a job may write (the MOM sets it as the limit)\n"
                "ulimit -Sf; ulimit -Hf   # in the job script: the limit the processes got, in 1024-byte blocks",
}
_SHELL_FIX = ("ulimit -Sf; ulimit -Hf   # the file-size limit in 1024-byte blocks (RLIMIT_FSIZE): SIGXFSZ when a write "
              "passes the soft one\n"
              "ulimit -Sf unlimited   # in the job script before the program: raise the soft limit, up to the hard one\n"
              "# a limit the scheduler set: ask it for larger files instead: qsub -l h_fsize=100G (Grid Engine), "
              "qsub -l file=100gb (PBS); under Slurm the submitting shell's limit goes with the job: sbatch --propagate=NONE")


@rule("SYS055", SYMBOL, "error", "a process was killed at its file-size limit (ulimit -f, SIGXFSZ)", impact=5,
      also={"warning": "only PBS's Exit_status 281 (256+25, SIGXFSZ), a number only"})
def file_size_limit_exceeded(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A process ended by SIGXFSZ, the signal the kernel sends to a process whose write would take
        a file past its file-size limit (RLIMIT_FSIZE, ulimit -f): bash's "<script>: line N: <pid>
        File size limit exceeded (core dumped)" or the status alone, the "Filesize limit exceeded"
        of BSD libcs and csh-family shells, and Slurm's ExitCode=0:25 (the batch script ended by
        signal 25), errors; PBS's Exit_status=281 (256+25) is a warning, a number only.

    Why it matters:
        The output file is cut at the limit and the program killed: rerunning unchanged ends at the
        same size. Sites set the limit per job (Grid Engine's h_fsize and s_fsize, PBS's file
        resource) or per login shell, and Slurm carries the submitting shell's limit into the job
        (PropagateResourceLimits).

    How to fix:
        ulimit -Sf / -Hf shows the limit; raise the soft limit in the job script up to the hard
        one, or ask the scheduler for larger files (qsub -l h_fsize=, qsub -l file=); under Slurm
        submit with sbatch --propagate=NONE (or FSIZE left out) where the login node's limit is the
        one that spoke.

    References:
        - https://man7.org/linux/man-pages/man2/getrlimit.2.html (RLIMIT_FSIZE: SIGXFSZ, then EFBIG)
        - https://git.savannah.gnu.org/cgit/bash.git/tree/jobs.c (notify_of_job_status: the signal's text)
        - https://slurm.schedmd.com/slurm.conf.html#OPT_PropagateResourceLimits (FSIZE among the limits carried)
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/scontrol/info_job.c (ExitCode=%u:%u)
        - https://github.com/eutelescope/eutelescope/issues/326 (a Grid Engine job's "Filesize limit exceeded" at 3 GB; -l h_fsize=8G)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    stated = [s for s in told if s.get("family") != "pbs_exit"]
    s = (stated or told)[0]
    fam = str(s.get("family"))
    yield Hit(message=f"{_SAYS.get(fam, 'SIGXFSZ')} (line {s.get('line')}: \"{told_text(s)}\"): a process was killed "
                      "when a file it wrote reached its file-size limit (ulimit -f); the file is cut at that size",
              fix=_FIX.get(fam, _SHELL_FIX), evidence=told_evidence(s), severity=None if stated else "warning")
