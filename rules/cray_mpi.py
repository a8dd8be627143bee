"""HPE Cray MPICH refusing to start (knowledge/messages/cray_mpich.toml): GPU support requested for a
program linked without the GPU Transport Layer; and MPI_Init run where no launcher serves PMI (a
login node, a program started directly), in the words of each MPI that says so: Cray MPT, MPICH's
and Intel MPI's PMI-2 client (mpich.toml), Open MPI's singleton (openmpi.toml). Cray MPICH is closed
source; its texts and their causes come from the HPE sites' documents (NERSC, CSCS, ALCF)."""

from __future__ import annotations

import re
from typing import Iterator, List, Optional, Tuple

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

GTL = "cray-mpich-gtl-not-linked"
OUTSIDE = "mpi-init-outside-launcher"

_PMI_STEP = "cray_mpich:cray-pmi-init-step-failed"
# srun started the ranks but shares no PMI with the library: mpi-srun-without-pmi's, never this rule's.
_SRUN_WITHOUT_PMI = "mpi-srun-without-pmi"
# Cray MPICH 8 puts the host name in its abort line: "[job id ] [date] [login31] - Abort(...)".
_HOST = re.compile(r"\] \[(?P<host>[A-Za-z][A-Za-z0-9_.-]{0,63})\] - Abort\(")
_LOGIN_HOST = re.compile(r"(?i)^(?:login|uan)\d{0,4}$")

_NO_INIT = ("python -c 'import mpi4py; mpi4py.rc.initialize = False; from mpi4py import MPI; print(MPI.Is_initialized())'   "
            "# on a login node: set mpi4py.rc.initialize = False before the package that imports mpi4py; False here")

_MPICH_FIX = (
    "mpiexec -n 1 python -c 'from mpi4py import MPI; print(MPI.Get_library_version())'   # under the same MPI's own launcher (MPICH's or Intel MPI's mpiexec.hydra) MPI_Init finds its PMI; start the program the same way\n"
    "srun --mpi=pmi2 -n 1 python -c 'from mpi4py import MPI; print(MPI.Get_library_version())'   # or inside a Slurm allocation (salloc first; srun --mpi=list shows the PMI types)\n"
    + _NO_INIT)

_OMPI_FIX = (
    "mpirun -n 1 python -c 'from mpi4py import MPI; print(MPI.Get_library_version())'   # under Open MPI's launcher, not as a singleton; start the program the same way\n"
    "ls \"$(dirname \"$(command -v mpirun)\")/orted\"   # a singleton forks this orted from the directory Open MPI was built for\n"
    "export OPAL_PREFIX=\"$(dirname \"$(dirname \"$(command -v mpirun)\")\")\"   # a moved or bundled Open MPI (conda, pip, a copied tree): tell it where it lives\n"
    + _NO_INIT)

_GTL_FIX = (
    "module list 2>&1 | grep -i craype-accel   # no craype-accel-* module: the wrappers did not link the GTL library\n"
    "ldd $(command -v PROGRAM) | grep -i gtl   # a GPU-aware build lists libmpi_gtl_cuda.so (NVIDIA) or libmpi_gtl_hsa.so (AMD)\n"
    "module load craype-accel-nvidia80   # before building: the site's accelerator target (AMD MI250X: craype-accel-amd-gfx90a)\n"
    "make clean && make CC=cc CXX=CC FC=ftn   # rebuild with the Cray wrappers, which then link libmpi_gtl_*\n"
    "export MPICH_GPU_SUPPORT_ENABLED=0   # or, for a program that passes no GPU buffers to MPI: do not ask for GPU support")

_CRAY_FIX = (
    "salloc -N 1 -t 30   # an allocation on a compute node (add the site's -C/-p and -A); then start ranks with srun\n"
    "srun -n 1 python -c 'from mpi4py import MPI; print(MPI.Get_library_version())'   # MPI (and Python importing mpi4py) works under srun (aprun on ALPS systems)\n"
    + _NO_INIT)


_SLURM_PMI_FIX = (
    "srun flux start ./script.sh   # Flux: the broker bootstraps from srun's PMI (one broker per node: srun -N$SLURM_NNODES "
    "--ntasks-per-node=1 flux start ...)\n"
    "srun --mpi=pmi2 ./program   # an MPI program: start its ranks with srun in the batch script (srun --mpi=list "
    "shows the PMI types this Slurm has)")


@rule("NET031", GTL, "error", "Cray MPICH was asked for GPU support but the program was linked without its GTL library", impact=7)
def cray_mpich_gtl_not_linked(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, Cray MPICH's abort in MPI_Init "MPIDI_CRAY_init: GPU_SUPPORT_ENABLED is
        requested, but GTL library is not linked" (with its "MPICH ERROR [Rank 0] ... Abort(-1)"
        prefix and the "aborting job:" repetition).

    Why it matters:
        With MPICH_GPU_SUPPORT_ENABLED=1 Cray MPICH moves GPU buffers through its GPU Transport
        Layer, libmpi_gtl_cuda (NVIDIA) or libmpi_gtl_hsa (AMD). The compiler wrappers link it only
        when an accelerator target module (craype-accel-*) is loaded at build time; a program built
        without one (plain ./configure picking mpicc, another MPI wrapper, a Python extension built
        by pip) aborts at MPI_Init wherever the variable is set, as sites set it by default on their
        GPU systems. A line from a login node says the program was run there: it is a build
        question all the same.

    How to fix:
        Load the site's accelerator target module (craype-accel-nvidia80 on Perlmutter and Polaris,
        craype-accel-amd-gfx90a on Frontier and LUMI) and rebuild with cc/CC/ftn, so that ldd shows
        libmpi_gtl_*; or, for a program that passes no GPU memory to MPI, set
        MPICH_GPU_SUPPORT_ENABLED=0.

    References:
        - https://eth-cscs.github.io/cscs-docs/software/communication/cray-mpich (GPU-aware MPI needs the GTL library and MPICH_GPU_SUPPORT_ENABLED=1)
        - https://docs.nersc.gov/development/programming-models/mpi/cray-mpich/ (CUDA-aware Cray MPICH on Perlmutter)
        - https://github.com/eth-cscs/cscs-docs/pull/40 (the abort quoted: load craype-accel-* before compiling)
        - https://github.com/sstsimulator/sst-core/issues/895 (fixed by building with MPICC=cc MPICXX=CC)
        - https://github.com/BLAST-WarpX/warpx/pull/2736 (Perlmutter: CRAY_ACCEL_TARGET=nvidia80)
    """
    told = catalogued(f, GTL)
    if not told:
        return
    s = told[0]
    found = _HOST.search(str(s.get("text", "")))
    host = found.group("host") if found else None
    where = (f" It ran on {host}, a login node: the site sets the variable there too, so every run of the program aborts."
             if host and _LOGIN_HOST.match(host) else "")
    yield Hit(message=f"Cray MPICH was asked for GPU support (MPICH_GPU_SUPPORT_ENABLED=1) but the program was linked "
                      f"without its GPU Transport Layer library, libmpi_gtl_* (line {s.get('line')}: \"{told_text(s)}\"): "
                      f"it was built without a craype-accel-* module or not with the Cray wrappers cc/CC/ftn.{where}",
              fix=_GTL_FIX, evidence=told_evidence(s))


@rule("NET032", OUTSIDE, "warning", "MPI_Init found no process manager: the program was run outside the MPI launcher", impact=5)
def mpi_init_outside_launcher(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, MPI_Init failing for want of a launcher, in each MPI's words: Cray MPT's
        stack ending in "PMI2 init failed: 1" (without Cray PMI's own trace naming a step that
        failed, "[PE_0]:_pmi_init:... returned -1", which a launched job prints); MPICH's and Intel
        MPI 2019+'s PMI-2 client, "MPIR_pmi_init(168)...: PMI2_Job_GetId returned 14" (the code
        decoded from pmi2.h); and Open MPI 4's singleton (a program started without mpirun) that
        could not start the orted it forks in mpirun's place, "ORTE_ERROR_LOG: ... in file
        ess_singleton_module.c" or "The singleton application was not able to find the executable
        "orted"". And Slurm's PMI-1 library (libpmi.so, which Flux's broker, MVAPICH2 and Intel MPI
        load) refused on every retry by the srun it must reach, "slurm_send_kvs_comm_set: Connection
        refused" or "slurm_get_kvs_comm_set: Connection refused": a process of the batch script, not
        of an srun step (flux start in sbatch, flux-core#1195); a timeout is an srun that was there,
        not this. Silent where srun started the ranks without a common PMI (mpi-srun-without-pmi).

    Why it matters:
        An MPI process learns its rank and peers from a process manager (PMI) that the launcher
        serves: srun, aprun, mpiexec. A process started directly (on a login node, or a Python that
        imports mpi4py or an MPI-built h5py there) finds none. Cray MPICH aborts (NERSC documents
        this stack as what MPI on a login node prints); MPICH's PMI-2 client initialises with no
        connection and fails on its first query; Open MPI runs as a singleton only if it can fork
        its own orted. Inside a batch job Cray's stack can also be MPI_Init timing out (NERSC:
        PMI_MMAP_SYNC_WAIT_TIME), and PMI-2's code 14 only says no server answered: a warning.

    How to fix:
        Run MPI programs under their launcher, in an allocation on a cluster (salloc, then
        srun -n N ..., or mpirun/mpiexec -n N of the same MPI); for Open MPI's singleton, make its
        orted findable (OPAL_PREFIX for a moved install); to import an MPI-using Python package
        where no MPI is needed, keep mpi4py from initialising MPI at import
        (mpi4py.rc.initialize = False before the import). The MPI launchers' own wrong PMI
        (srun --mpi) is mpi-srun-without-pmi's. In a batch script, start a Flux instance, or a
        program linked to Slurm's libpmi, with srun (srun -N "$SLURM_NNODES" --ntasks-per-node=1
        flux start ...), as the Flux maintainers answered in flux-core#1195.

    References:
        - https://nersc.gitlab.io/development/languages/python/ (NERSC: MPI does not work on login nodes; this stack)
        - https://mpi4py.readthedocs.io/en/stable/mpi4py.html#mpi4py.rc.initialize
        - https://github.com/pmodels/mpich/blob/main/src/util/mpir_pmi.c (MPIR_pmi_init: PMI2_Job_GetId)
        - https://github.com/pmodels/mpich/issues/4871 (the PMI-2 client run without mpiexec.hydra)
        - https://github.com/open-mpi/ompi/blob/v4.1.8/orte/mca/ess/singleton/ess_singleton_module.c (fork_hnp)
        - https://github.com/dfm/emcee/issues/228 (import emcee on a login node)
        - https://github.com/radiasoft/sirepo/issues/4930 (h5py importing MPI on NERSC)
        - https://github.com/PolyChord/PolyChordLite/issues/64 (Intel MPI on CSD3's login nodes)
        - https://github.com/radical-cybertools/radical.pilot/issues/766 (the same line under aprun, with Cray PMI naming a socket it could not bind)
        - https://github.com/SchedMD/slurm/blob/master/src/api/slurm_pmi.c (slurm_pmi_send_kvs_comm_set, slurm_pmi_get_kvs_comm_set: the RPCs to srun)
        - https://github.com/flux-framework/flux-core/issues/1195 (flux start in an sbatch script without srun; srun flux start works)
    """
    told = catalogued(f, OUTSIDE)
    if not told:
        return
    found = f.get("ticket.symptoms") or []
    if any(s.get("id") == _PMI_STEP for s in found):
        return  # PMI started and names its own failure: this process was launched
    if catalogued(f, _SRUN_WITHOUT_PMI):
        return  # srun launched it: the PMI the two do not share is the cause
    s = told[0]
    said = f"(line {s.get('line')}: \"{told_text(s)}\")"
    family = s.get("family")
    if family == "openmpi":
        error = s.get("orte_error")
        why = f" ({error})" if error else ""
        message = (f"an Open MPI program was started without mpirun, as a singleton, and could not start the orted "
                   f"daemon a singleton forks in mpirun's place{why} {said}: run it under mpirun, or make orted "
                   "findable (a moved or bundled Open MPI needs OPAL_PREFIX)")
        fix = _OMPI_FIX
    elif family == "slurm_mpi":
        message = (f"Slurm's PMI library could not reach the srun of its job step {said}: the program (flux start, "
                   "an MPI program) was started directly in the batch script, not by srun, so no step's PMI server "
                   "was there to give it its rank")
        fix = _SLURM_PMI_FIX
    elif family == "mpich":
        rc = str(s.get("pmi_rc") or "")
        meaning = _PMI2_CODES.get(rc)
        code = f" (code {rc}: {meaning})" if meaning else ""
        message = (f"MPI_Init's PMI-2 client found no process manager{code} {said}: the program (or a Python "
                   "package importing mpi4py) was started without mpiexec/srun, as on a login node, where an "
                   "MPICH or Intel MPI built for PMI-2 cannot initialise")
        fix = _MPICH_FIX
    else:
        message = (f"MPI_Init found no PMI server to learn its rank from {said}: "
                   "the program (or a Python package importing mpi4py) was started outside srun/aprun, as on a login "
                   "node, where Cray MPICH cannot initialise. Inside a batch job the same stack means MPI_Init timed out")
        fix = _CRAY_FIX
    yield Hit(message=message, fix=fix, evidence=told_evidence(s))


# PMI-2's return codes (pmodels/mpich src/pmi/include/pmi2.h @ fe478cea; Slurm's and Flux's pmi2.h
# carry the same numbers). The client run with no server fails its first query with 14.
_PMI2_CODES = {
    "-1": "PMI2_FAIL", "1": "PMI2_ERR_INIT, PMI-2 not initialised", "2": "PMI2_ERR_NOMEM",
    "3": "PMI2_ERR_INVALID_ARG", "4": "PMI2_ERR_INVALID_KEY", "5": "PMI2_ERR_INVALID_KEY_LENGTH",
    "6": "PMI2_ERR_INVALID_VAL", "7": "PMI2_ERR_INVALID_VAL_LENGTH", "8": "PMI2_ERR_INVALID_LENGTH",
    "9": "PMI2_ERR_INVALID_NUM_ARGS", "10": "PMI2_ERR_INVALID_ARGS", "11": "PMI2_ERR_INVALID_NUM_PARSED",
    "12": "PMI2_ERR_INVALID_KEYVALP", "13": "PMI2_ERR_INVALID_SIZE",
    "14": "PMI2_ERR_OTHER, no connection to a PMI-2 server",
}


KNOWN = "mpi-known-issue"
_ISSUES = knowledge.load("mpi_known_issues")["issue"]
_ROCM_RELEASE = re.compile(r"(?i)rocm\D{0,30}?(?P<v>\d{1,2}\.\d{1,2}(?:\.\d{1,6})?)")


def _version(v: str) -> Tuple[int, ...]:
    return tuple(int(p) for p in v.split("."))


def _systems_named(f: FactView) -> str:
    """The pasted lines the paste's messages stand on, lower-cased: where a host name (frontier01982) shows."""
    return "\n".join(str(s.get("text") or "") for s in f.get("ticket.symptoms") or []).lower()


def _rocm_named(f: FactView) -> List[str]:
    """The ROCm releases the paste names, as precisely as it names them (6.2.4, or the series 6.2)."""
    out = []
    for v in f.get("ticket.rocm_versions") or []:
        m = _ROCM_RELEASE.search(str(v.get("text") or ""))
        got = m.group("v") if m and m.group("v").startswith(str(v.get("series"))) else str(v.get("series") or "")
        if got:
            out.append(got)
    return out


def _outside(issue: dict, releases: List[str]) -> Optional[str]:
    """The release that puts the paste outside the issue's affected ROCm releases, or None where every
    release named is affected or cannot be judged (a series whose first release is not the fixed one)."""
    fixed = [_version(v) for v in issue.get("fixed") or []]
    if not fixed or not releases:
        return None
    start = _version(issue["affected_from"]) if issue.get("affected_from") else None
    for r in releases:
        v = _version(r)
        if start and v[:2] >= start:
            return None
        if len(v) == 3:
            ok = any(v[:2] == x[:2] and v >= x for x in fixed)
        else:  # a series alone: outside only when its first release (x.y.0) is a fixed one
            ok = any(v == x[:2] and x[2] == 0 for x in fixed)
        if not ok:
            return None
    return ", ".join(releases)


@rule("NET046", KNOWN, "error", "a failure the site or vendor documents as a known bug of its MPI stack", impact=6,
      also={"info": "the paste names only releases outside the ones the known issue affects"})
def mpi_known_issue(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, a message that an HPC centre documents, on its own known-issue page, as
        a known bug of its MPI stack (knowledge/mpi_known_issues.toml): OLCF's OLCFDEV-1655 (Cray
        MPICH's MPI_Init failing, "PMI_Allgather failed: -1", with ROCm), OLCFDEV-1597 ("OFI poll
        failed (... UNDELIVERABLE)" on Frontier), LUMI's "[unset]:_pmi_set_af_in_use:PMI ERROR".
        An issue tied to one system fires only where the paste names it (a host name such as
        frontier01982). Where the paste names only ROCm releases the centre lists as fixed, the
        finding says so (info) instead of giving the workaround.

    Why it matters:
        The failure is the site's MPI stack, not the user's code or input: debugging the program
        finds nothing, and the centre has already published what avoids it.

    How to fix:
        Apply the workaround exactly as the centre documents it (an environment variable in the
        job script, or a call in the program), and tell the site's support the issue's reference
        where it persists.

    References:
        - https://docs.olcf.ornl.gov/systems/frontier_user_guide.html#known-issues (OLCFDEV-1655, OLCFDEV-1597)
        - https://github.com/Lumi-supercomputer/lumi-userguide/blob/main/docs/helpdesk/issues.md
        - https://github.com/BLAST-WarpX/warpx/issues/4236 (OLCFDEV-1655 on LUMI)
    """
    told = {s.get("id"): s for s in f.get("ticket.symptoms") or []}
    named = None
    for issue in _ISSUES:
        s = told.get(issue["symptom"])
        if s is None:
            continue
        if issue["systems"]:
            named = _systems_named(f) if named is None else named
            if not any(re.search(rf"\b{re.escape(n)}\d{{0,6}}\b", named) for n in issue["systems"]):
                continue
        where = f"line {s.get('line')}: \"{told_text(s)}\""
        said = f"{issue['centre']} {issue['ref']}, \"{issue['title']}\" ({issue['source'].split(' ')[0]})"
        outside = _outside(issue, _rocm_named(f))
        if outside:
            yield Hit(severity="info",
                      message=(f"{where}: the signature of {said}, but the paste names ROCm {outside}, outside the "
                               f"releases it affects ({issue['affected']}): another cause"),
                      fix="# not this known issue: read the error stack's lowest line for the layer that failed",
                      evidence={**told_evidence(s), "known_issue": issue["id"]})
            return
        fix = (f"{issue['workaround']}   # in the job script before srun: the workaround {issue['centre']} documents for {issue['ref']}"
               if issue["workaround_kind"] == "environment" else
               f"# {issue['workaround']}: the workaround {issue['centre']} documents for {issue['ref']} (a change to the program's source)")
        yield Hit(message=(f"{where}: a known bug of the site's MPI stack, {said}: {issue['summary']}; affected: "
                           f"{issue['affected']}. Not the program's fault: apply the documented workaround, and give the "
                           f"site's support the reference {issue['ref']} if it persists"),
                  fix=fix, evidence={**told_evidence(s), "known_issue": issue["id"]})
        return
