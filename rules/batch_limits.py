"""A batch scheduler's own notice that it killed a job at a limit the job asked for (memory, threads or
processes, CPU time; SIGXCPU where the shell reports a CPU-time kill), and a job script the scheduler or the shell could not read because of its Windows line
endings. Each scheduler says it in its own words: the PBS/TORQUE MOM ("=>> PBS: job killed: vmem N
exceeded limit M", knowledge/messages/pbs_job_end.toml), Moab ("job N exceeded MEM usage hard
limit", moab.toml), LSF's termination reasons (TERM_MEMLIMIT, TERM_THREADLIMIT, lsf.toml), Grid
Engine's execd (sge.toml), HTCondor's hold reasons (htcondor.toml) and Slurm's cgroup plugin
(oom.toml); the job's exit status (exitstatus.toml, pbs_exit.toml) is decoded beside them as
supporting evidence, never as a cause by itself. Also sbatch's refusals of a file that is not a
script it can send (no #! first line, empty, only blanks, a NUL byte: knowledge/messages/slurm_cli.toml)."""

from __future__ import annotations

import math
from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

MEMORY = "batch-job-memory-limit-exceeded"
THREADS = "batch-job-thread-limit-exceeded"
LINE_ENDINGS = "batch-script-dos-line-endings"

# The units each emitter prints its figures in (the catalogue entry's source says so): TORQUE's vmem
# in bytes, OpenPBS's and TORQUE's job totals with "kb", Moab's and HTCondor's in MB, Grid Engine's
# in bytes.
_BYTES_PER = {"b": 1, "kb": 1024, "mb": 1024 ** 2}
_UNIT_OF = {"pbs_job_end": "b", "moab": "mb", "htcondor": "mb", "sge": "b"}

# A signal in the exit status says how the job ended; these are the two a scheduler's kill leaves.
_SIGNAL_SAYS = {
    "SIGTERM": "SIGTERM, which the scheduler sends first when it ends a job at a limit (or on bkill, qdel, scancel)",
    "SIGKILL": "SIGKILL, which a hard limit or the kernel's OOM killer sends",
}


def _exit_status(f: FactView) -> str:
    """The job's exit status, decoded to its signal, as a clause for a finding's message: the first
    pasted "exit code 143" (128+N, exitstatus.toml) or PBS "Exit_status=271" (256+N, pbs_exit.toml)
    whose signal is SIGTERM or SIGKILL; '' when none is pasted."""
    for s in f.get("ticket.symptoms") or []:
        fam, key = s.get("family"), str(s.get("key", ""))
        if fam in ("exitstatus", "pbs_exit") and key in _SIGNAL_SAYS:
            base = 128 if fam == "exitstatus" else 256
            return (f"; the exit status on line {s.get('line')}, {s.get('code')} = {base}+{int(s.get('code', 0)) - base}, "
                    f"is {_SIGNAL_SAYS[key]}")
    return ""


def _gib(s: dict, field: str) -> Optional[float]:
    """A figure of the notice (used or limit) in GiB, where the emitter's unit is known."""
    raw = s.get(field)
    if raw is None:
        return None
    try:
        value = float(raw)
    except (TypeError, ValueError):
        return None
    unit = "kb" if s.get("unit") == "kb" else _UNIT_OF.get(str(s.get("family")))
    if unit is None:
        return None
    return value * _BYTES_PER[unit] / 1024 ** 3


def _ask_gb(s: dict) -> int:
    """What to ask for: a quarter above what the job used, in whole GB; 8 when no figure says."""
    used = _gib(s, "used") or _gib(s, "limit")
    return max(1, math.ceil(used * 1.25)) if used else 8


def _memory_fix(s: dict) -> str:
    """The request option of the scheduler that spoke, and its command that shows what was used."""
    fam, gb = s.get("family"), _ask_gb(s)
    if fam in ("pbs_job_end", "pbs_exit", "moab"):
        opt = "vmem" if str(s.get("resource", "")).lower() in ("vmem", "pvmem", "swap") else "mem"
        return (f"qstat -f $PBS_JOBID | grep -E 'resources_used|Resource_List'   # what the job used against what it asked for (tracejob JOBID once it ended)\n"
                f"#PBS -l mem={gb}gb,vmem={gb}gb   # in the job script: ask for {opt} above what it used (TORQUE applies a queue's default vmem when none is asked)\n"
                f"qsub -l mem={gb}gb,vmem={gb}gb job.sh   # or on the command line; qstat -Qf QUEUE shows the queue's resources_default and resources_max")
    if fam == "lsf":
        mb = gb * 1024
        return ("bjobs -l JOBID | grep -iE 'MAX MEM|MEMLIMIT|SWAPLIMIT'   # what the job used against its limit (bhist -l JOBID once it ended)\n"
                f"bsub -M {mb} -R \"rusage[mem={mb}]\" ./job.sh   # ask for a memory limit and reserve it (units: LSF_UNIT_FOR_LIMITS, MB by default)")
    if fam == "sge":
        return ("qacct -j JOBID | grep -E 'maxvmem|failed|category'   # the job's peak virtual memory against its h_vmem\n"
                f"qsub -l h_vmem={gb}G job.sh   # h_vmem is per slot: with -pe smp N it is multiplied by N")
    if fam == "htcondor":
        mb = gb * 1024
        return ("condor_q -hold -af ClusterId ProcId HoldReason MemoryUsage RequestMemory   # why it is held, what it used, what it asked for\n"
                f"condor_qedit JOBID RequestMemory {mb} && condor_release JOBID   # ask for more memory and let the held job run again\n"
                f"# and in the submit file for the next ones: request_memory = {gb} GB")
    return ("seff $SLURM_JOB_ID; sacct -j $SLURM_JOB_ID -o JobID,State,ReqMem,MaxRSS   # what each step used against what the job asked for\n"
            f"sbatch --mem={gb}G job.sh   # ask for more memory for the job (or --mem-per-cpu)")


def _quoted(s: dict) -> str:
    """The pasted line as a finding quotes it: the line, or the matched words where the line is
    longer than a quote holds (a sentence around the notice)."""
    text, matched = told_text(s), str(s.get("matched") or "")
    return text if not matched or matched in text else matched[:120]


def _stated_first(told: list):
    """(the line to quote, whether it states the kill): a notice's own words before PBS's bare exit
    status, which says the limit only by its number (a warning)."""
    stated = [s for s in told if s.get("family") != "pbs_exit"]
    return (stated or told)[0], bool(stated)


def _named(s: dict) -> str:
    """Who gave the notice, as the finding names it."""
    return {"pbs_job_end": "the PBS MOM", "pbs_exit": "PBS's exit status", "moab": "Moab", "lsf": "LSF",
            "sge": "Grid Engine's execd", "htcondor": "HTCondor", "oom": "Slurm"}.get(str(s.get("family")), "the scheduler")


def _figures(s: dict) -> str:
    used, limit = _gib(s, "used"), _gib(s, "limit")
    if used is not None and limit is not None:
        return f" (used {used:.2f} GiB, limit {limit:.2f} GiB)"
    if limit is not None:
        return f" (limit {limit:.2f} GiB)"
    return ""


# Lines that state the kill itself; the rest (Slurm's failcnt, PBS's exit codes) are consistent with it.
_WARNING_ONLY = ("oom:slurm-step-memory-limit-at-some-point", "htcondor:hold-code-34")


@rule("ENV075", MEMORY, "error", "the batch scheduler killed the job for using more memory than it asked for", impact=7,
      also={"warning": "only Slurm's \"Exceeded step memory limit at some point\" (the cgroup's limit reached, no kill "
                       "stated), PBS's Exit_status -26/-27 (the MOM's memory-kill codes, a number only) or HTCondor's "
                       "HoldReasonCode = 34 alone"})
def batch_job_memory_limit_exceeded(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted job output or mail, a batch scheduler's own notice that it killed (or held) the
        job because the job's memory went past what it asked for: the PBS/TORQUE MOM's "=>> PBS:
        job killed: vmem N exceeded limit M" (mem, vmem, pvmem; TORQUE's mail "Job exceeded a
        memory resource limit", OpenPBS's "Job exceeded resource mem"), Moab's "job N exceeded MEM
        usage hard limit (U > L)" (MEM, JOBMEM, SWAP), LSF's TERM_MEMLIMIT and TERM_SWAP, Grid
        Engine's "job N exceeds job hard limit \"h_vmem\"" and Univa/Altair Grid Engine's
        "execd enforced h_vmem limit" or "h_rss limit" (qacct's failed 46 and 47, and the abort
        mail's "failed execd enforced h_vmem limit because:"), HTCondor's hold reasons "Job has
        gone over (cgroup) memory limit of N megabytes", "Job has encountered an out-of-memory
        event." and the HOLD_IF_MEMORY_EXCEEDED policy's "memory usage exceeded request_memory",
        all errors; HTCondor's HoldReasonCode = 34 alone (JobOutOfResources, memory or, in newer
        releases, disk) is a warning; Slurm's cgroup plugin's "Exceeded
        step memory limit at some point." (Slurm 14.11 to 17.11: the step reached its limit, no
        kill stated) and PBS's Exit_status -26 or -27 (JOB_EXEC_KILL_VMEM, _MEM) are warnings. An
        exit status beside it (143 = 128+15, SIGTERM; PBS 271 = 256+15) is quoted as support.
        How this splits with host-memory-oom-killed (MEM006): that rule answers the kernel's OOM
        killer, whether for the host or for a memory cgroup, and so every Slurm kill for --mem
        (Slurm enforces it through the job's cgroup: "oom_kill event", "Out Of Memory", "Exceeded
        job memory limit"); this rule answers the schedulers whose own daemon measured the job's
        usage against its request and killed or held it. Where a paste holds both a Slurm line read
        here and one MEM006 reads, only MEM006 answers.

    Why it matters:
        The program did not crash and the node did not run out of memory: the scheduler enforced
        the amount the job requested, or the queue's default when the job asked for none (TORQUE
        applies a queue's default vmem even when mem is given; a Moab queue's default memory may be
        1 GB). Asking for more physical memory alone does not help when the limit hit is vmem.

    How to fix:
        Read what the job used against its request (qstat -f / tracejob, bjobs -l / bhist -l,
        qacct -j, condor_q -hold, seff / sacct) and submit again asking for more of the resource
        named, in that scheduler's option: qsub -l mem=,vmem= (PBS, TORQUE, Moab), bsub -M with
        -R "rusage[mem=]" (LSF), qsub -l h_vmem= (Grid Engine, per slot), request_memory
        (HTCondor), sbatch --mem (Slurm); or make the program use less memory.

    References:
        - https://github.com/openpbs/openpbs/blob/cd7ab5edaf03dcac2f1cb9e2f42d75eb117d468a/src/resmom/mom_main.c (the "=>> PBS: job killed: " lines)
        - https://github.com/openpbs/openpbs/blob/cd7ab5edaf03dcac2f1cb9e2f42d75eb117d468a/src/include/job.h (JOB_EXEC_KILL_VMEM -26, JOB_EXEC_KILL_MEM -27)
        - https://github.com/adaptivecomputing/torque/blob/34ff845417cc0348dfe0a61a491e5e0f4adf6ef4/src/resmom/linux/mom_mach.c (vmem, pvmem exceeded limit)
        - http://docs.adaptivecomputing.com/mwm/7-0/Content/topics/sharedResources/resourceusagelimits.html (Moab RESOURCELIMITPOLICY)
        - https://www.ibm.com/docs/SSWRJV_10.1.0/lsf_admin/termination_reasons_lsf.html (TERM_MEMLIMIT, TERM_SWAP)
        - https://github.com/gridengine/gridengine/blob/f47b0e0a22483847008777ef18a78c29b7001f66/source/daemons/execd/msg_execd.h (MSG_JOB_EXCEEDHLIM_USSFF)
        - https://github.com/htcondor/htcondor/blob/c458df5d5d418543b020edbaaf2313bed4c49932/src/condor_starter.V6.1/vanilla_proc.cpp (the memory hold reason)
        - https://github.com/SchedMD/slurm/blob/slurm-17-11-0-1/src/plugins/task/cgroup/task_cgroup_memory.c (Exceeded step memory limit at some point)
        - https://github.com/veg/hyphy/issues/500 (TORQUE's default vmem limit of 2 GiB)
    """
    told = catalogued(f, MEMORY)
    if not told:
        return
    stated = [s for s in told if s.get("id") not in _WARNING_ONLY and s.get("family") != "pbs_exit"]
    if not stated and any(s.get("family") == "oom" for s in told) and catalogued(f, "host-memory-oom-killed"):
        return  # a Slurm memory kill pasted too: host-memory-oom-killed answers it
    s = stated[0] if stated else told[0]
    resource = f" {s['resource']}" if s.get("resource") else ""
    yield Hit(message=f"{_named(s)} says it ended the job at its{resource} memory limit{_figures(s)} (line {s.get('line')}: "
                      f"\"{_quoted(s)}\"): the job used more memory than it asked for, or than the queue's default "
                      f"when it asked for none{_exit_status(f)}",
              fix=_memory_fix(s), evidence=told_evidence(s), severity=None if stated else "warning")


def _threads_fix(s: dict) -> str:
    fam = s.get("family")
    first = ("export OMP_NUM_THREADS=${NSLOTS:-${LSB_DJOB_NUMPROC:-${PBS_NUM_PPN:-${SLURM_CPUS_PER_TASK:-1}}}}   "
             "# in the job script: as many threads as CPUs the job was given (OpenMP, MKL and OpenBLAS read it)\n"
             "# and give the tool its own thread option with the same figure (-j, --threads, --cpus, -p)\n")
    if fam == "lsf":
        return first + ("bjobs -l JOBID | grep -iE 'THREAD|PROCESSLIMIT|NTHREAD'   # the job's thread count and limit (bhist -l once it ended)\n"
                        "bsub -n 8 -R \"span[hosts=1]\" ./job.sh   # or ask for as many slots as the program runs threads; "
                        "bqueues -l QUEUE shows the queue's THREADLIMIT and PROCESSLIMIT")
    if fam in ("pbs_job_end", "pbs_exit", "moab"):
        return first + ("qstat -f $PBS_JOBID | grep -E 'resources_used.ncpus|resources_used.cpupercent|Resource_List'   # CPUs used against asked\n"
                        "qsub -l select=1:ncpus=8 job.sh   # or ask for as many CPUs as the program runs threads (TORQUE: -l nodes=1:ppn=8)")
    return first + "sbatch --cpus-per-task=8 job.sh   # or ask for as many CPUs as the program runs threads"


@rule("ENV076", THREADS, "error", "the batch scheduler killed the job for running more threads or processes than allowed",
      impact=6, also={"warning": "only PBS's Exit_status -24/-25 (the MOM's ncpus-kill codes, a number only)"})
def batch_job_thread_limit_exceeded(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted job output or mail, a scheduler's notice that it killed the job for running
        more threads, processes or busy CPUs than allowed: LSF's "TERM_THREADLIMIT: job killed
        after reaching LSF thread limit." and TERM_PROCESSLIMIT, the PBS MOM's "=>> PBS: job
        killed: ncpus 9.6 exceeded limit 8 (burst)" (or "(sum)") and OpenPBS's mail "Job exceeded
        resource ncpus (burst)", Moab's "job N exceeded PROC usage hard limit (U > L)" (PROC,
        JOBPROC), errors; PBS's Exit_status -24 or -25 (JOB_EXEC_KILL_NCPUS_BURST, _SUM) is a
        warning. An exit status beside it (LSF's "Exited with exit code 143.", 128+15: SIGTERM) is
        quoted as support.

    Why it matters:
        Many tools start one thread or worker per CPU of the node (OpenMP, BLAS, a tool's own
        pool), not per CPU the job was given; on a queue with a thread or process limit, or where
        the MOM enforces ncpus, the scheduler ends the job. Rerunning unchanged ends the same way.

    How to fix:
        Make the program use as many threads as the job asked for: OMP_NUM_THREADS (and the tool's
        own -j, --threads or --cpus option) set from the job's slot count; or ask for as many
        slots or CPUs as the program runs threads (bsub -n, qsub -l select=...:ncpus=, sbatch
        --cpus-per-task), within the queue's THREADLIMIT or PROCESSLIMIT (bqueues -l).

    References:
        - https://www.ibm.com/docs/SSWRJV_10.1.0/lsf_admin/termination_reasons_lsf.html (TERM_THREADLIMIT, TERM_PROCESSLIMIT)
        - https://github.com/openpbs/openpbs/blob/cd7ab5edaf03dcac2f1cb9e2f42d75eb117d468a/src/resmom/mom_main.c (ncpus exceeded limit, burst and sum)
        - https://github.com/openpbs/openpbs/blob/cd7ab5edaf03dcac2f1cb9e2f42d75eb117d468a/src/include/job.h (JOB_EXEC_KILL_NCPUS_BURST -24, _SUM -25)
        - http://docs.adaptivecomputing.com/mwm/7-0/Content/topics/sharedResources/resourceusagelimits.html (Moab PROC, JOBPROC)
        - https://github.com/cdanielmachado/carveme/issues/34 (carve killed at LSF's thread limit)
    """
    told = catalogued(f, THREADS)
    if not told:
        return
    s, stated = _stated_first(told)
    yield Hit(message=f"{_named(s)} says it ended the job at its limit of threads, processes or CPUs (line {s.get('line')}: "
                      f"\"{_quoted(s)}\"): the program started more threads or processes than the job or queue allows, "
                      f"commonly one per CPU of the node{_exit_status(f)}",
              fix=_threads_fix(s), evidence=told_evidence(s), severity=None if stated else "warning")


_LINE_ENDINGS_FIX = (
    "dos2unix job.sh   # rewrite the script's \\r\\n line endings as \\n (in place)\n"
    "sed -i 's/\\r$//' job.sh   # the same where dos2unix is not installed\n"
    "file job.sh   # 'with CRLF line terminators' before, not after\n"
    "# then submit it again; set the editor to save with LF (Unix) line endings, or edit it on the cluster")


@rule("ENV077", LINE_ENDINGS, "error", "the job script has Windows (DOS) line endings", impact=4)
def batch_script_dos_line_endings(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a paste, a job script that has Windows line endings (\\r\\n), as the scheduler or the
        shell reports it: sbatch's "Batch script contains DOS line breaks (\\r\\n)" (every Slurm
        release from 14.11), TORQUE qsub's "script is written in DOS/Windows text format", and
        bash's errors on such a script: "/bin/bash^M: bad interpreter" (the #! line's \\r, which
        older bash shows as ^M; zsh's "bad interpreter: /bin/bash^M"), coreutils env's
        "/usr/bin/env: 'bash\\r': No such file or directory" (a "#!/usr/bin/env bash" line),
        "$'\\r': command not found" (a blank line) and "syntax error near unexpected token
        `$'do\\r''" (a keyword carrying the \\r). Each names the carriage return itself, so each is
        an error. Bash 5.2 (as recorded here) says only "cannot execute: required file not found" for the #!
        line, which names no carriage return and is not read here.

    Why it matters:
        A script written or edited on Windows ends every line with \\r\\n. sbatch refuses it; PBS
        and LSF pass it on, and bash then looks for an interpreter "/bin/bash\\r", runs "\\r" as a
        command, or fails to parse do/then/fi: the job fails before the program starts.

    How to fix:
        Convert the script's line endings with dos2unix (or sed -i 's/\\r$//'), check with file,
        and submit it again; save scripts with LF line endings from then on.

    References:
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/sbatch/sbatch.c (contains_dos_linebreak)
        - https://github.com/adaptivecomputing/torque/blob/34ff845417cc0348dfe0a61a491e5e0f4adf6ef4/src/cmds/qsub_functions.c (isWindowsFormat)
        - https://git.savannah.gnu.org/cgit/bash.git/tree/execute_cmd.c (shell_execve: ^M; command not found with ansic_quote)
        - https://github.com/earthlab/rslurm/issues/84 (the maintainer: dos2unix)
        - https://github.com/KosinskiLab/AlphaPulldown/issues/183 (/bin/bash^M: bad interpreter under PBS)
    """
    told = catalogued(f, LINE_ENDINGS)
    if not told:
        return
    s = told[0]
    yield Hit(message=f"line {s.get('line')}: \"{_quoted(s)}\": the job script has Windows (DOS) line endings, \\r\\n: "
                      "each line carries a carriage return that the scheduler refuses or the shell reads as part of the "
                      "command", fix=_LINE_ENDINGS_FIX, evidence=told_evidence(s))


CPU_TIME = "batch-job-cpu-time-limit-exceeded"


def _hms(seconds: float) -> str:
    s = int(math.ceil(seconds))
    return f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _seconds(s: dict, field: str) -> Optional[float]:
    """A figure of the notice in seconds: PBS prints whole seconds, Grid Engine's execd seconds with
    decimals; LSF's reason and the signal carry none."""
    try:
        return float(s[field]) if s.get(field) is not None and s.get("family") in ("pbs_job_end", "sge") else None
    except (TypeError, ValueError):
        return None


def _cpu_fix(s: dict) -> str:
    """The request of the limit that spoke, asked for at twice the limit hit (or 24 hours)."""
    fam, limit = s.get("family"), _seconds(s, "limit")
    ask = _hms(limit * 2) if limit else "24:00:00"
    why = "   # cput counts the CPU time of all the job's processes and threads: N busy threads spend it N times faster than walltime"
    if fam == "pbs_exit" and s.get("key") == "SIGXCPU":
        # 256+24: the kernel's SIGXCPU at the soft RLIMIT_CPU, which TORQUE's MOM sets from pcput (or the shell's ulimit -t).
        return ("qstat -f $PBS_JOBID | grep -E 'resources_used.(cput|walltime)|Resource_List.(p?cput|walltime|ncpus)'   "
                "# the CPU-time limits the job was given (tracejob JOBID once it ended)\n"
                "ulimit -St; ulimit -Ht   # in the job script: the per-process CPU-time limit in seconds (RLIMIT_CPU) that sends SIGXCPU\n"
                f"qsub -l pcput={ask},cput={ask} job.sh{why}\n"
                "# the limit is the shell's own (a ulimit -t in a profile): ulimit -St unlimited in the job script, up to ulimit -Ht")
    if fam in ("pbs_job_end", "pbs_exit", "moab"):
        opt = "pcput" if s.get("key") == "killed-pcput" else "cput"
        return ("qstat -f $PBS_JOBID | grep -E 'resources_used.(cput|walltime|ncpus)|Resource_List.(p?cput|walltime|ncpus)'   "
                "# CPU time used against the limit (tracejob JOBID once it ended)\n"
                f"qsub -l {opt}={ask} job.sh{why}\n"
                "# ask for at least ncpus x walltime of cput; qstat -Qf QUEUE shows the queue's resources_max.cput and resources_default.cput")
    if fam == "lsf":
        return ("bjobs -l JOBID | grep -iE 'CPULIMIT|CPU time'   # the job's CPU time used against its limit (bhist -l JOBID once it ended)\n"
                "bsub -c 48:00 ./job.sh   # CPU limit [hours:]minutes for all the job's processes together: a job running N threads spends it N times faster\n"
                "bqueues -l QUEUE | grep -A2 CPULIMIT   # the queue's own CPU limit, which bsub -c cannot exceed")
    if fam == "sge":
        return ("qacct -j JOBID | grep -E '^(cpu|ru_wallclock|slots|failed|category)'   # CPU seconds used against h_cpu\n"
                f"qsub -l h_cpu={ask} job.sh{why.replace('cput', 'h_cpu')} (the execd multiplies h_cpu by the slots)\n"
                "qconf -sq QUEUE | grep -E '^[hs]_cpu'   # the queue's own h_cpu, which a request cannot exceed")
    if fam == "slurm_exit":
        return ("ulimit -St; ulimit -Ht   # on the host you submit from: a login node's CPU-time limit (RLIMIT_CPU) goes with the job\n"
                "scontrol show config | grep -i PropagateResourceLimits   # which of the submitting shell's limits Slurm carries (ALL by default)\n"
                "sbatch --propagate=NONE job.sh   # submit without carrying the login node's limits; or put ulimit -St unlimited in the script before the program")
    return ("ulimit -St; ulimit -Ht   # the shell's CPU-time limit in seconds (RLIMIT_CPU): SIGXCPU at the soft one, SIGKILL at the hard one\n"
            "ulimit -St unlimited   # in the job script before the program: raise the soft limit up to the hard one (ulimit -Ht)\n"
            "# where the scheduler set the limit, ask it for more CPU time instead: qsub -l cput= (PBS), bsub -c (LSF), qsub -l h_cpu= (Grid Engine),\n"
            "# counting all threads' time; on a login node (a CPU-time limit per process), run the work as a batch job")


def _cpu_named(s: dict) -> str:
    if s.get("family") == "slurm_exit":
        return "Slurm's ExitCode (signal 24, SIGXCPU, which the kernel sends at the CPU-time limit)"
    return "SIGXCPU, as the shell reports it," if s.get("family") == "signals" else _named(s)


def _cpu_figures(s: dict) -> str:
    used, limit = _seconds(s, "used"), _seconds(s, "limit")
    if used is not None and limit is not None:
        return f" (used {_hms(used)} of CPU time, limit {_hms(limit)})"
    return f" (limit {_hms(limit)})" if limit is not None else ""


@rule("ENV085", CPU_TIME, "error", "the job was killed at its CPU-time limit (the scheduler's cput, CPULIMIT, h_cpu, or ulimit -t)",
      impact=6, also={"warning": "only PBS's Exit_status -28 (the MOM's cput-kill code) or 280 (256+24, SIGXCPU), a number only"})
def batch_job_cpu_time_limit_exceeded(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted job output, mail or shell log, a notice that the job was ended because its CPU
        time (not its wall-clock time) reached a limit: the PBS/TORQUE MOM's "=>> PBS: job killed:
        cput 7300 exceeded limit 7200" (OpenPBS's job-wide "cput job total N secs exceeded limit M
        secs"; TORQUE's per-process "pcput exceeded limit N"), TORQUE's mail "Job exceeded its cpu
        time limit. Job was aborted" and OpenPBS's "Job exceeded resource cput"; Moab's "job N
        exceeded CPUTIME usage hard limit (U > L)"; LSF's
        "TERM_CPULIMIT: job killed after reaching LSF CPU usage limit."; Grid Engine's execd "job N
        exceeds job hard limit \"h_cpu\" of queue ..."; and SIGXCPU as bash prints it ("<script>:
        line N: <pid> CPU time limit exceeded (core dumped)", or the status alone), which Open MPI,
        Hydra and srun report by number or name too, and Slurm's "ExitCode=0:24" (scontrol show
        job: the batch script ended by signal 24), all errors. SIGXCPU is what the kernel sends at
        the soft RLIMIT_CPU (ulimit -t, a shell's limit, which a scheduler or a login node's policy
        may set for the processes, and TORQUE's MOM sets from pcput), and what LSF and Grid Engine
        send first at their CPU limits. PBS's Exit_status -28 (JOB_EXEC_KILL_CPUT) and 280 (256+24:
        the job's shell ended by SIGXCPU) are warnings: a number only. A walltime kill is not read here
        (slurm-time-limit answers it).

    Why it matters:
        CPU time counts every core: a job running 16 busy threads spends one hour of cput in under
        four minutes of wall-clock time, so a multithreaded program given the default cput of a
        queue is killed long before its walltime. Rerunning unchanged ends the same way.

    How to fix:
        Compare the CPU time used with the limit (qstat -f / tracejob, bjobs -l / bhist -l, qacct -j,
        ulimit -t) and ask for more CPU time in that scheduler's request: qsub -l cput= (or pcput=,
        PBS/TORQUE; at least ncpus x walltime), bsub -c (LSF, minutes, within the queue's CPULIMIT),
        qsub -l h_cpu= (Grid Engine, multiplied by the slots); where the shell's limit is the one hit,
        ulimit -St up to the hard limit, or run the work as a batch job rather than on a login node;
        under Slurm, which carries the submitting shell's limits into the job (PropagateResourceLimits),
        submit with sbatch --propagate=NONE or raise the limit in the script.

    References:
        - https://github.com/openpbs/openpbs/blob/cd7ab5edaf03dcac2f1cb9e2f42d75eb117d468a/src/resmom/mom_main.c (cput exceeded limit, the job total form)
        - https://github.com/openpbs/openpbs/blob/cd7ab5edaf03dcac2f1cb9e2f42d75eb117d468a/src/include/job.h (JOB_EXEC_KILL_CPUT -28)
        - https://github.com/adaptivecomputing/torque/blob/34ff845417cc0348dfe0a61a491e5e0f4adf6ef4/src/resmom/linux/mom_mach.c (cput, pcput exceeded limit)
        - https://www.ibm.com/docs/SSWRJV_10.1.0/lsf_admin/termination_reasons_lsf.html (TERM_CPULIMIT)
        - https://github.com/gridengine/gridengine/blob/f47b0e0a22483847008777ef18a78c29b7001f66/source/daemons/execd/msg_execd.h (MSG_JOB_EXCEEDHLIM_USSFF)
        - https://git.savannah.gnu.org/cgit/bash.git/tree/jobs.c (notify_of_job_status: the signal's text, "(core dumped)")
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/scontrol/info_job.c (ExitCode=%u:%u, the signal after the colon)
        - https://slurm.schedmd.com/slurm.conf.html#OPT_PropagateResourceLimits (the submitting shell's ulimit -t goes with the job)
        - https://github.com/marbl/canu/issues/2089 (falconsense killed by SIGXCPU: "you've exceeded CPU time rather than just killed")
        - https://github.com/dereneaton/ipyrad/issues/507 (vsearch killed by SIGXCPU on a cluster)
    """
    told = catalogued(f, CPU_TIME)
    if not told:
        return
    s, stated = _stated_first(told)
    yield Hit(message=f"{_cpu_named(s)} says the job was ended at its CPU-time limit{_cpu_figures(s)} (line {s.get('line')}: "
                      f"\"{_quoted(s)}\"): CPU time, summed over every process and thread, not wall-clock time; a "
                      f"multithreaded program spends it as many times faster as it runs busy threads{_exit_status(f)}",
              fix=_cpu_fix(s), evidence=told_evidence(s), severity=None if stated else "warning")


# ----------------------------------------------------------------------------------------------
# ENV131 batch-script-not-a-script
NOT_A_SCRIPT = "batch-script-not-a-script"
_LOOK = ("head -c 64 job.sh | od -c | head -n 4   # the first bytes: '#' '!' must come first; a blank line (\\n), spaces, "
         "357 273 277 (a UTF-8 byte-order mark) or \\0 between the letters (UTF-16) are what sbatch refuses\n"
         "file job.sh   # names an encoding such as \"UTF-16\" or \"with BOM\", and \"empty\" for an empty file")
_NOT_A_SCRIPT_FIX = {
    "slurm_cli:sbatch-no-shebang": (
        _LOOK + "\n"
        "file job.sh | grep -q UTF-16 && iconv -f UTF-16 -t UTF-8 job.sh > job-utf8.sh && mv job-utf8.sh job.sh   # "
        "UTF-16 text (Windows editors, PowerShell's > redirection) to UTF-8 first\n"
        "sed -i '1s/^\\xEF\\xBB\\xBF//' job.sh && sed -i '/[^[:space:]]/,$!d' job.sh && sed -i '1s/^[[:space:]]*//' job.sh"
        "   # drop a byte-order mark, the blank lines before the first text and the spaces before #!\n"
        "head -n 1 job.sh | grep -q '^#!' || sed -i '1i #!/bin/bash' job.sh   # a script with no #! line at all gets one\n"
        "sbatch job.sh"),
    "slurm_cli:sbatch-script-null-char": (
        "od -c job.sh | grep -m 3 '\\\\0'   # where the NUL bytes sit: after a #! line that is right, so a part "
        "was pasted or appended in another encoding (UTF-16) or as binary data\n"
        "tr -d '\\000' < job.sh > job-clean.sh && sbatch job-clean.sh   # the text without its NUL bytes; a binary "
        "program is run with sbatch --wrap='./program' instead"),
    "slurm_cli:sbatch-script-empty": (
        "wc -c job.sh   # 0 bytes: the tool or command that wrote it failed, or a quota cut it off (quota -s; df -h .)\n"
        "sbatch --wrap='hostname'   # a one-line job needs no file at all"),
    "slurm_cli:sbatch-script-whitespace": (
        "cat -A job.sh | head -n 20   # only blank lines: the tool that generated it wrote no commands\n"
        "sbatch --wrap='hostname'   # a one-line job needs no file at all"),
}
_NOT_A_SCRIPT_SAYS = {
    "slurm_cli:sbatch-no-shebang": "its first two bytes are not #! followed by an interpreter: a blank line, a comment or spaces "
                                   "before #!, a byte-order mark or UTF-16 text from a Windows editor, or a file that is not "
                                   "a script",
    "slurm_cli:sbatch-no-shebang-second-line": "its first two bytes are not #! followed by an interpreter: a blank line, a "
                                               "comment or spaces before #!, a byte-order mark or UTF-16 text from a "
                                               "Windows editor, or a file that is not a script",
    "slurm_cli:sbatch-script-null-char": "it starts with #! but holds a NUL byte further on, which slurmctld refuses: "
                                         "a part pasted or appended in UTF-16 or as binary data",
    "slurm_cli:sbatch-script-empty": "the file is empty (0 bytes read)",
    "slurm_cli:sbatch-script-whitespace": "it holds only blank characters: no commands",
}


@rule("ENV131", NOT_A_SCRIPT, "error",
      "sbatch refused the job file: no #! interpreter line first, empty, only blanks, or a NUL byte", impact=4)
def batch_script_not_a_script(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a paste, sbatch refusing the file it was given before anything reaches slurmctld: "This
        does not look like a batch script.  The first / line must start with #! followed by the
        path to an interpreter." (has_shebang: the file's first two bytes are not #!), "Batch
        script is empty!", "Batch script contains only whitespace!" and "The Slurm controller does
        not allow scripts that / contain a NULL character". The same lines at Slurm 20.11 and
        25.05. Windows line endings are batch-script-dos-line-endings'.

    Why it matters:
        No job is created, whatever the options. sbatch reads the interpreter from the very first
        bytes: a blank line, a comment or indentation before #! (a template that indents it), a
        UTF-8 byte-order mark or UTF-16 text written by a Windows editor or PowerShell, and a
        generator that wrote nothing all end here (UTF-16 text fails the #! test already: its second
        byte is NUL); a NUL byte after a correct #! line is a part appended in UTF-16 or as binary.

    How to fix:
        Look at the first bytes (od -c, file), remove what precedes #! (byte-order mark, blank
        lines, spaces), convert UTF-16 to UTF-8 with iconv, or add a #!/bin/bash line; remove NUL
        bytes with tr; an empty file is rewritten by whatever produced it; a program is run with
        sbatch --wrap.

    References:
        - https://github.com/SchedMD/slurm/blob/slurm-25-05-8-1/src/sbatch/sbatch.c (_get_script_buffer, has_shebang: str[0] == '#' and str[1] == '!')
        - https://slurm.schedmd.com/sbatch.html (the script's first line, --wrap)
        - https://github.com/glotzerlab/signac-flow/issues/575 (a template indented the #!/bin/bash line)
        - https://github.com/deepmodeling/dpgen/issues/599
    """
    told = catalogued(f, NOT_A_SCRIPT)
    if not told:
        return
    s = told[0]
    sid = str(s.get("id"))
    says = _NOT_A_SCRIPT_SAYS.get(sid, _NOT_A_SCRIPT_SAYS["slurm_cli:sbatch-no-shebang"])
    fix = _NOT_A_SCRIPT_FIX.get(sid, _NOT_A_SCRIPT_FIX["slurm_cli:sbatch-no-shebang"])
    yield Hit(message=f"sbatch refused the job file (line {s.get('line')}: \"{told_text(s)}\"): {says}; no job was "
                      "created", fix=fix, evidence=told_evidence(s))
