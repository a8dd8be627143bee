"""The per-process open-files limit (RLIMIT_NOFILE, ulimit -n) is too low for the program: read from
each emitter's words for EMFILE (knowledge/messages/open_files.toml: Go, Node.js, nginx, Java's
SocketException, Open MPI's pipe and socket limits, OrthoFinder; errno.toml's EMFILE after a C
program's words, strace, Rust, Java's "(Too many open files)"; torch.toml's CPython [Errno 24]). A
DataLoader's own exhaustion stays dataloader-open-files' (MEM004); ENFILE, the whole system's table
(fs.file-max), is not this; inotify_init's EMFILE (inotify instances) is not this either."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, first_symptom, ticket_evidence, told_text

_SYMBOL = "open-files-limit-too-low"
# MEM004's own readings: the DataLoader's message and the descriptor passing between its workers.
_DATALOADER = ("torch:dataloader-too-many-open-files", "torch:dataloader-fd-passing-emfile", "torch:dataloader-ancdata")
_SAID = "prose:open-files-limit-said"
_ORTHOFINDER = "open_files:orthofinder-open-files-limit"

_FIX = ("ulimit -Sn; ulimit -Hn   # the soft limit the program met, and the hard limit it may be raised to without root\n"
        "ulimit -n \"$(ulimit -Hn)\"   # in the job script, before the program: the soft limit up to the hard one\n"
        "scontrol show config | grep -i PropagateResourceLimits   # Slurm: whether a job takes the submitting shell's limits (sbatch --propagate=NOFILE asks for that one)\n"
        "grep -rs nofile /etc/security/limits.conf /etc/security/limits.d/   # where the hard limit is set: an admin raises it there ('<user> hard nofile 65536')")


# torch's shm_open of a shared tensor (torch.toml shm-open-failed) names its errno: only EMFILE is this
# limit (Permission denied is /dev/shm's own mode).
_TORCH_SHM_OPEN = "torch:shm-open-failed"


_TORCH_SHARING = ("\npython -c \"import torch.multiprocessing as mp; print(mp.get_sharing_strategy())\"   # torch's tensors "
                  "shared between processes hold a descriptor each under file_descriptor; at the start of the script, "
                  "torch.multiprocessing.set_sharing_strategy('file_system') shares them by file name instead")


def _emfile(f: FactView) -> list:
    out = [s for s in catalogued(f, _SYMBOL) if s.get("id") != _SAID
           and not any(w in str(s.get("text", "")).lower() for w in ("inotify", "fsnotify"))
           and (s.get("id") != _TORCH_SHM_OPEN or "too many open files" in str(s.get("text", "")).lower())]
    bare = first_symptom(f, "torch:python-emfile")
    if bare is not None:
        out.append(bare)
    return sorted(out, key=lambda s: s.get("line") if isinstance(s.get("line"), int) else 0)


def _listed_limit(f: FactView):
    s = first_symptom(f, "ulimit:nofile-bash")
    return s.get("count") if s else None


@rule("SYS051", _SYMBOL, "warning", "the open-files limit (ulimit -n) is too low for the program", impact=6,
      also={"error": "the program compared the open-files limit with what it needs and said it is too low",
            "info": "the user's own reading of ulimit -n, beside a file the program could not open"})
def open_files_limit_too_low(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a process that reached its open-files limit (EMFILE), in its emitter's
        words: C programs' "<what>: Too many open files", CPython's "[Errno 24] Too many open
        files", Java's "(Too many open files)" and "java.net.SocketException: Too many open files",
        Go's "too many open files" (net/http's "accept4: too many open files; retrying in 1s"),
        Node.js's "EMFILE: too many open files", nginx's "(24: Too many open files)", Rust's "(os
        error 24)", Open MPI's "The system limit on number of pipes (network connections) a process
        can open was reached"; OrthoFinder's "The system limits on the number of files a process can
        open is too low" (an error: it compared the limit with its need); a user's own reading of
        "ulimit -Sn" (info); torch's "unable to open shared memory object <...> in read-write mode:
        Too many open files (24)" (a tensor shared between processes; its other errnos are not
        this). Where the paste holds bash's ulimit -a, its open-files line is quoted.

    Why it matters:
        Every open file, socket and pipe holds a descriptor; at the soft limit (1024 on most
        distributions) the next open fails and the program stops, or a server stops accepting. A
        program that opens one file per input (OrthoFinder per species, a build per input file), an
        MPI launcher with many ranks, or a server with many clients needs more; a count that keeps
        growing is a program that never closes its files.

    How to fix:
        ulimit -Sn shows the soft limit and ulimit -Hn the hard one; raise the soft one in the job
        script (ulimit -n "$(ulimit -Hn)") before the program. Slurm starts a job with the submitting
        shell's limits where PropagateResourceLimits says so (sbatch --propagate=NOFILE); a hard
        limit below the need is raised by an administrator in /etc/security/limits.conf (nofile)
        or the service's LimitNOFILE. ENFILE ("Too many open files in system") is fs.file-max, not this.

    References:
        - https://man7.org/linux/man-pages/man2/getrlimit.2.html (RLIMIT_NOFILE; EMFILE from open(2))
        - https://slurm.schedmd.com/slurm.conf.html#OPT_PropagateResourceLimits
        - https://github.com/davidemms/OrthoFinder/issues/581
        - https://github.com/splatlab/mantis/issues/14
    """
    if first_symptom(f, *_DATALOADER) is not None:
        return   # the DataLoader's own exhaustion: dataloader-open-files (MEM004) answers it
    limit = _listed_limit(f)
    listed = f" (the pasted ulimit -a lists an open-files limit of {limit})" if limit else ""
    told = _emfile(f)
    ortho = next((s for s in told if s.get("id") == _ORTHOFINDER), None)
    if ortho is not None:
        need = ortho.get("needed")
        needs = f": it needs at least {need} files open at once" if need else ""
        yield Hit(message=f"OrthoFinder says the open-files limit is too low for its run (line {ortho['line']}){needs}{listed}",
                  severity="error",
                  fix=((f"ulimit -n {need}   # in the job script before orthofinder; past the hard limit (ulimit -Hn) an admin raises it\n"
                        if need else "") + _FIX),
                  evidence=ticket_evidence(ortho))
        return
    if told:
        s = told[0]
        yield Hit(message=f"a process reached its open-files limit (line {s['line']}: \"{told_text(s)}\"){listed}: EMFILE is "
                          "the per-process limit (ulimit -n, RLIMIT_NOFILE); a program that needs many files, sockets "
                          "or pipes at once needs a higher soft limit, and one whose count keeps growing is not "
                          "closing them",
                  fix=_FIX + (_TORCH_SHARING if s.get("id") == _TORCH_SHM_OPEN else ""), evidence=ticket_evidence(s))
        return
    said = first_symptom(f, _SAID)
    if said is not None and str(said.get("count") or "").isdigit() and int(said["count"]) <= 4096:
        yield Hit(message=f"the paste reports an open-files limit of {said['count']} (line {said['line']}: "
                          f"\"{told_text(said)}\"): a program that opens more files than that at once fails at "
                          "its next open (the words do not show the limit was reached)",
                  severity="info", fix=_FIX, evidence=ticket_evidence(said))
