"""Open MPI's launcher refusing to run as root (knowledge/messages/openmpi.toml, run-as-root-refused): the
default user of most container images is root, so a container's first mpirun meets it."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "mpi-run-as-root"

_FIX = ("id -u   # 0: this shell is root (a container image's default user, or sudo)\n"
        "export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1   # in a container whose only user is root: "
        "Open MPI 3.x-4.x honour both together; every release takes mpirun --allow-run-as-root\n"
        "exit   # outside a container: leave the root shell (or drop sudo) and run mpirun as your own user")


@rule("ENV063", SYMBOL, "error", "mpirun refused to run as root", impact=5)
def mpi_run_as_root(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket: Open MPI's "<tool> has detected an attempt to run as root." (mpirun,
        mpiexec, orterun, oshrun; prterun in Open MPI 5) or "<tool> cannot provide the help
        message when run as root.": the launcher saw an effective uid of 0 without
        --allow-run-as-root (nor, from 3.x on, OMPI_ALLOW_RUN_AS_ROOT=1 with
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1) and exited before starting any rank.

    Why it matters:
        No rank runs. Docker and most container images run as root by default, so the first
        mpirun in a container stops here; on a host it means the job was started with sudo or
        from a root shell, which Open MPI refuses because a mistake (a TMPDIR, a cleanup) can
        damage the system.

    How to fix:
        In a container whose only user is root: export OMPI_ALLOW_RUN_AS_ROOT=1 and
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 (Open MPI 3.x on) or pass --allow-run-as-root. On a host:
        run mpirun as an ordinary user.

    References:
        - https://github.com/open-mpi/ompi/blob/00106f5ac96a3d9e6288ec07dc47e325897cd5f8/orte/orted/orted_submit.c (orte_submit_init)
        - https://github.com/openpmix/prrte/blob/09a14037ef2064569c02f70ecff2111053c42e67/src/mca/schizo/base/schizo_base_stubs.c (prte_schizo_base_root_error_msg)
        - https://docs.open-mpi.org/en/v5.0.x/man-openmpi/man1/mpirun.1.html (--allow-run-as-root)
        - https://github.com/open-mpi/ompi/issues/4451 (the environment variables, asked for by container users)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    tool = s.get("tool") or "mpirun"
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {tool} runs as root (uid 0) and Open MPI refuses that "
                      "without an explicit override; no rank was started",
              fix=_FIX, evidence=told_evidence(s))
