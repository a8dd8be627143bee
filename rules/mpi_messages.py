"""What MPI launchers and transports say about the node, read from a pasted log
(knowledge/messages/openmpi.toml, slurm_mpi.toml, ucx.toml): srun and the MPI library without a
process-management interface in common, RDMA registration refused by the locked-memory limit, the
single-copy transfer between ranks refused by Yama's ptrace scope (also read on the node itself),
a binding the kernel refused because Open MPI's hwloc does not see the job's cgroup, a session
directory too long for PMIx's Unix-domain socket, nodes that differ in PMIx compression support, and
PMIx's harmless warning that it has no compression library. Where the
ranks go (slots, spawns, binding) is rules/mpi_slots.py."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, ticket_evidence, told_evidence, told_text
from hpcdoctor.rules._where import where
from hpcdoctor.rules.nccl_messages import _MEMLOCK_FIX


_PLUGIN_LIBRARY = "slurm_mpi:pmix-cannot-load-library"


@rule("ENV020", "mpi-srun-without-pmi", "error", "srun and the MPI library share no process-management interface", impact=8)
def mpi_srun_without_pmi(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, Open MPI's "The application appears to have been direct launched using
        "srun", but OMPI was not built with SLURM's PMI support" (Open MPI 4, help-ess-base.txt),
        Open MPI 5's "No PMIx server was reachable, but a PMI1/2 was detected." (help-mpi-runtime.txt:
        each rank then starts as a singleton), or srun's own
        refusal of the --mpi type: "Couldn't find the specified plugin name for mpi/pmix", "cannot
        find mpi plugin for mpi/pmix", "MPI: Cannot create context for mpi/pmix", "Invalid MPI type
        'pmix', --mpi=list for acceptable types", and "pmi/pmix: can not load PMIx library" (Slurm's
        src/interfaces/mpi.c, src/common/plugin.c, src/plugins/mpi/pmix/mpi_pmix.c); and MPICH's
        PMI-1/PMI-2 client started by a PMIx launcher, "launcher not compatible with PMI2 client"
        (src/pmi/src/pmi_v2.c, MPICH 4.1 on).

    Why it matters:
        Ranks started by srun learn their rank and find each other through a process-management
        interface (PMIx, PMI-2) that Slurm serves through an MPI plugin. When Slurm has no plugin of
        the type asked for (a Slurm built without PMIx), when that plugin cannot load its library, or
        when the MPI library speaks none of the types srun offers, no rank gets past MPI_Init.

    How to fix:
        srun --mpi=list shows the types this Slurm offers; run with one the MPI library was built for
        (srun --mpi=pmix for Open MPI 4 and 5 built with PMIx; ompi_info shows its PMIx), or start the
        ranks with the MPI library's own mpirun inside the allocation. A plugin that is listed but
        cannot load libpmix is the administrators' installation.

    References:
        - https://github.com/open-mpi/ompi/blob/v4.1.8/orte/mca/ess/base/help-ess-base.txt
        - https://slurm.schedmd.com/mpi_guide.html
        - https://github.com/SchedMD/slurm/blob/master/src/interfaces/mpi.c
        - https://github.com/geoschem/geos-chem/issues/822 (a Slurm built without the pmix plugin; mpirun works)
        - https://github.com/open-mpi/ompi/issues/10940
        - https://github.com/pmodels/mpich/blob/v4.3.2/src/pmi/src/pmi_util.c (PMIU_detect_pmix_launcher)
    """
    told = catalogued(f, "mpi-srun-without-pmi")
    if not told:
        return
    library = next((s for s in told if s.get("id") == _PLUGIN_LIBRARY), None)
    ompi = next((s for s in told if s.get("family") == "openmpi"), None)
    mpich = next((s for s in told if s.get("family") == "mpich"), None)
    s = library or ompi or mpich or told[0]
    plugin = next((t.get("plugin") for t in told if t.get("plugin")), None) or "mpi/pmix"
    if library is not None:
        message = (f"Slurm's {plugin} plugin is installed but cannot load the PMIx library (line {s['line']}): "
                   "srun cannot serve PMIx to the ranks; an installation problem of the cluster")
        fix = ("srun --mpi=list   # the types that do load; run with one the MPI library supports (--mpi=pmi2), "
               "or mpirun inside the allocation\n# administrators: the libpmix Slurm was built against must be "
               "installed on every node (ldd on Slurm's mpi_pmix*.so names what is missing)")
    elif ompi is not None:
        message = (f"Open MPI was started by srun but shares no PMI with it (line {s['line']}): srun gave it no "
                   "PMIx or PMI-2 it was built to use, so MPI_Init fails")
        fix = ("srun --mpi=list   # the PMI types this Slurm offers\n"
               "ompi_info | grep -i -E 'pmix|slurm'   # what this Open MPI was built with\n"
               "srun --mpi=pmix ./app   # when both have PMIx; otherwise start the ranks with mpirun inside the allocation")
    elif mpich is not None:
        version = s.get("pmi_version") or "1/2"
        message = (f"MPICH's PMI-{version} client was started by a launcher that serves only PMIx (line {s['line']}): "
                   "srun --mpi=pmix or Open MPI's mpirun/prterun set PMIX_* variables, while this MPICH was built "
                   "for PMI-1/PMI-2, so MPI_Init fails")
        fix = ("srun --mpi=list   # the PMI types this Slurm offers\n"
               "srun --mpi=pmi2 -n 2 hostname   # start the ranks with PMI-2 (then: srun --mpi=pmi2 ./app), not --mpi=pmix\n"
               "command -v mpiexec && mpiexec --version   # or start them with this MPICH's own mpiexec (Hydra), not another MPI's mpirun")
    else:
        message = (f"srun has no usable MPI plugin for the type asked for ({plugin}, line {s['line']}): this Slurm "
                   "was built without it, so no rank starts")
        fix = ("srun --mpi=list   # the types this Slurm offers\n"
               "# then srun --mpi=<one of them> that the MPI library supports, or start the ranks with the MPI "
               "library's mpirun inside the allocation")
    yield Hit(message=message, fix=fix, evidence=ticket_evidence(s))


# A verbs call refused with ENOMEM (older UCX printed no memlock note) and the user's own limits
# listing (knowledge/messages/ulimit.toml) showing a finite locked-memory limit: together they
# state what UCX's later note states.
_VERBS_ENOMEM = ("ucx:create-cq-failed", "ucx:reg-mr-failed")
_MEMLOCK_SHOWN = ("ulimit:memlock-bash", "ulimit:memlock-zsh", "ulimit:memlock-dash", "ulimit:memlock-tcsh")


def _verbs_enomem_with_finite_memlock(f: FactView):
    found = f.get("ticket.symptoms") or []
    failed = [s for s in found if s.get("id") in _VERBS_ENOMEM
              and str(s.get("error") or "").strip() == "Cannot allocate memory"]
    limit = next((s for s in found if s.get("id") in _MEMLOCK_SHOWN and str(s.get("kbytes") or "").isdigit()), None)
    memlock = f.get("limits.memlock")
    if limit is None and isinstance(memlock, dict) and memlock.get("pasted") and isinstance(memlock.get("soft"), int):
        # the same limit read from a pasted /proc/PID/limits (bytes) or another listing checks/limits.py reads
        limit = {"kbytes": str(memlock["soft"] // 1024), "form": memlock.get("form")}
    return (failed, limit) if failed and limit is not None else ([], None)


@rule("NET009", "mpi-memlock-limit", "error", "RDMA memory registration for MPI refused: the locked-memory limit", impact=8)
def mpi_memlock_limit(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, UCX's "Please set max locked memory (ulimit -l) to 'unlimited' (current: N
        kbytes)", which it appends to ibv_reg_mr, ibv_create_cq and ibv_create_qp failures with
        ENOMEM (src/uct/ib/base/ib_log.c), or Open MPI's openib BTL "failed to initialize while
        trying to allocate some locked memory" (help-mpi-btl-openib.txt [init-fail-no-mem]). Older
        UCX printed the verbs call alone ("ibv_create_cq(cqe=4096) failed: Cannot allocate
        memory", "ibv_reg_mr(address=0x..., length=N, access=0xf) failed: Cannot allocate memory"):
        that answers only where the paste also shows a finite locked-memory limit in a shell's
        listing (bash or zsh ulimit -a, dash's, tcsh's limit) or in /proc/PID/limits.

    Why it matters:
        InfiniBand and RoCE send from memory the adapter has pinned, and pinned memory is bounded by
        RLIMIT_MEMLOCK. With the usual default of 64 kB (or 8 MB) registrations fail, and UCX or
        Open MPI falls back to slower transports or aborts. The limit must hold inside the job: a
        container's --ulimit, and slurmd's own limit where Slurm propagates the submitting shell's.

    How to fix:
        Run the job with an unlimited locked-memory limit (docker --ulimit memlock=-1; on a Slurm
        cluster the administrators set memlock unlimited in /etc/security/limits.conf and
        PropagateResourceLimitsExcept=MEMLOCK in slurm.conf); check with ulimit -l inside the job.

    References:
        - https://github.com/openucx/ucx/blob/v1.22.0/src/uct/ib/base/ib_log.c
        - https://github.com/open-mpi/ompi/blob/v4.1.8/opal/mca/btl/openib/help-mpi-btl-openib.txt
        - https://docs.open-mpi.org/en/v5.0.x/tuning-apps/networking/ib-and-roce.html
        - https://github.com/openucx/ucx/issues/8684 (ibv_create_cq failed with the limit at 64 kB)
    """
    told = catalogued(f, "mpi-memlock-limit")
    limit = None
    if not told:
        told, limit = _verbs_enomem_with_finite_memlock(f)
        if not told:
            return
    s = told[0]
    current = s.get("current") or (limit or {}).get("kbytes")
    said = f" (current: {current} kB" + (f", line {limit['line']}" if limit and limit.get("line") else f", {limit['form']}" if limit and limit.get("form") else "") + ")" if current else ""
    place = where(f)
    if place is None and any(t.get("id") == "prose:torque-pbs-named" for t in f.get("ticket.symptoms") or []):
        fix = _MEMLOCK_FIX_PBS
    else:
        fix = _MEMLOCK_FIX[place] if place else "\n".join(_MEMLOCK_FIX[p] for p in ("docker", "site"))
    if s.get("id") == "intel_mpi:dapl-rlimit-memlock-too-small":
        yield Hit(message=f"Intel MPI's DAPL fabric found the job's locked-memory limit (ulimit -l) too small to pin memory "
                          f"for InfiniBand{said} (line {s['line']}: \"{told_text(s)}\"): the limit inside the job, which "
                          "the batch system's daemon passes on, not the one a login shell shows",
                  fix=fix, evidence=ticket_evidence(s))
        return
    yield Hit(message=f"the RDMA adapter would not pin memory for MPI: the locked-memory limit (ulimit -l) is finite{said} "
                      f"and the adapter refused to register memory or create a queue with ENOMEM (line {s['line']})",
              fix=fix, evidence=ticket_evidence(s))


# TORQUE and PBS start a job's processes from pbs_mom, whose own limits they inherit: limits.conf
# (pam_limits) applies to login sessions, not to a daemon started at boot (fds#6023's answer: ulimit
# -l unlimited in pbs_mom's start-up, then restart it). systemd units set it with LimitMEMLOCK.
_MEMLOCK_FIX_PBS = ("echo 'ulimit -l' | qsub -l nodes=1 -j oe -N memlock   # its output file memlock.o<id> must say "
                    "unlimited (a login shell's ulimit says nothing of the job's)\n"
                    "grep -i 'max locked' /proc/$(pgrep -o pbs_mom)/limits   # administrators: the limit pbs_mom runs "
                    "with, which every job inherits; raise it in its start-up (ulimit -l unlimited in the init script, "
                    "LimitMEMLOCK=infinity in its systemd unit), then restart pbs_mom")

_PTRACE_FIX = ("cat /proc/sys/kernel/yama/ptrace_scope   # 0: ranks of one user may read each other (CMA works); "
               "1: only with a PR_SET_PTRACER grant; 2: CAP_SYS_PTRACE only; 3: never\n"
               "export I_MPI_SHM_LMT=shm   # Intel MPI 2018 and older: copy large messages through shared memory instead\n"
               "export OMPI_MCA_btl_vader_single_copy_mechanism=none   # Open MPI 4: no CMA, no warning\n"
               "# in a container where the scope is 2: docker run --cap-add=SYS_PTRACE ... (Yama lets a process with "
               "CAP_SYS_PTRACE read another)\n"
               "# administrators, where the site's policy allows ranks of one user to read each other: "
               "sudo sysctl -w kernel.yama.ptrace_scope=0 (and kernel.yama.ptrace_scope = 0 in /etc/sysctl.d/ to keep it)")
_UCX_CMA_FIX = ("\nexport UCX_TLS=^cma   # UCX 1.11 and later: leave the CMA transport out; intra-node copies go through "
                "shared memory (mm) instead\n"
                "# UCX 1.5 and older use CMA without reading the scope and know no ^: upgrade (1.6 and later fall back by "
                "themselves) or list the transports to use without cma (UCX_TLS=mm,self and the network's: rc, ud or tcp)")


@rule("SYS011", "ptrace-scope-blocks-mpi-shm", "error",
      "Yama's ptrace scope refuses MPI's single-copy transfer between ranks on the node", impact=5,
      also={"warning": "Open MPI or UCX says CMA is unavailable for the ptrace settings and falls back (slower)",
            "info": "on the node: ptrace_scope is 2 or 3, so no MPI can use CMA between ranks (they copy twice)"})
def ptrace_scope_blocks_mpi_shm(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, Intel MPI 2018's "dcp_recv(...): Internal MPI error!  Cannot read from
        remote process" with its own advice (enable ptrace for non-root users, or
        I_MPI_SHM_LMT=shm), and Open MPI's "WARNING: Linux kernel CMA support was requested via
        the btl_vader_single_copy_mechanism MCA variable, but CMA support is not available due to
        restrictive ptrace settings". UCX's failed copy refused with EPERM, in each release's
        wording (1.7 and older: "process_vm_readv delivered 0 instead of N, error message Operation
        not permitted"; 1.8 to 1.11: "process_vm_readv(pid=P length=N) returned -1: Operation not
        permitted"; 1.12 on: "process_vm_readv(pid=P {...}-->{...}) returned -1: Operation not
        permitted"), an error; its debug line "ptrace_scope is 2 but no CAP_SYS_PTRACE, CMA is
        unsupported", a warning (it falls back). Other errnos of the same lines (Bad address on a
        GPU buffer, No such process) are not this. On the node: /proc/sys/kernel/yama/ptrace_scope
        at 2 or 3.

    Why it matters:
        MPI libraries copy large messages between ranks on one node with a single cross-memory read
        (CMA, process_vm_readv), which the kernel allows only where ptrace would be: Yama's scope 1
        limits it to descendants or a PR_SET_PTRACER grant, 2 to CAP_SYS_PTRACE, 3 forbids it.
        Intel MPI 2018 aborts; Open MPI, UCX and MPICH check the scope and fall back to copying
        twice through shared memory (Open MPI and UCX grant themselves at 1; MPICH only uses it at 0),
        which costs intra-node bandwidth.

    How to fix:
        Tell the MPI not to use it (I_MPI_SHM_LMT=shm for Intel MPI; btl_vader_single_copy_mechanism
        none for Open MPI 4; UCX_TLS=^cma for UCX 1.11 and later, or a UCX of 1.6 or later, which
        reads the scope and falls back), or, where the site's security policy allows, set
        kernel.yama.ptrace_scope to 0 (an administrator's sysctl).

    References:
        - https://www.kernel.org/doc/html/latest/admin-guide/LSM/Yama.html (ptrace_scope 0-3)
        - https://pypi.org/project/impi/2018.0.3/ (the wheel's lib/libmpi.so: the message and its two workarounds)
        - https://github.com/open-mpi/ompi/blob/v4.1.8/opal/mca/btl/vader/help-btl-vader.txt ([cma-permission-denied])
        - https://github.com/open-mpi/ompi/blob/v5.0.8/opal/mca/smsc/cma/smsc_cma_component.c (the scope check)
        - https://github.com/openucx/ucx/blob/v1.22.0/src/uct/sm/scopy/cma/cma_ep.c (uct_cma_ep_tx_error) and
          https://github.com/openucx/ucx/blob/v1.5.1/src/uct/sm/cma/cma_ep.c (the older wording)
        - https://github.com/openucx/ucx/blob/v1.22.0/src/uct/sm/scopy/cma/cma_md.c (uct_cma_test_ptrace_scope)
        - https://man7.org/linux/man-pages/man2/process_vm_readv.2.html (EPERM: the ptrace access mode check)
        - https://github.com/pmodels/mpich/blob/6a79bf6575c3b5b41cabbd3d59340634d6f9412d/src/mpid/ch4/shm/ipc/cma/cma_init.c
    """
    told = catalogued(f, "ptrace-scope-blocks-mpi-shm")
    if told:
        s = told[0]
        sid = str(s.get("id", ""))
        quoted = f"(line {s.get('line')}: \"{told_text(s)}\")"
        if sid.startswith("openmpi:") or sid == "ucx:cma-ptrace-scope-unsupported":
            who = "Open MPI" if sid.startswith("openmpi:") else "UCX"
            yield Hit(message=(f"{who} could not use the single-copy transfer between ranks (CMA) {quoted}: "
                               "Yama's ptrace_scope forbids one rank reading another's memory; it fell back to "
                               "copying twice (slower)"),
                      fix=_PTRACE_FIX, evidence=ticket_evidence(s), severity="warning")
        elif sid.startswith("ucx:"):
            # EPERM from process_vm_readv/writev is the kernel's ptrace access check (mm/process_vm_access.c):
            # Yama's scope, or ranks in different user namespaces (separate container instances)
            yield Hit(message=(f"UCX's cross-memory copy between ranks (CMA) was refused {quoted}: the kernel's "
                               "ptrace check forbids one rank reading another's memory (Yama's ptrace_scope, or "
                               "ranks in different containers or user namespaces)"),
                      fix=_PTRACE_FIX + _UCX_CMA_FIX, evidence=ticket_evidence(s))
        else:
            yield Hit(message=(f"Intel MPI could not read another rank through the single-copy transfer between "
                               f"ranks (CMA) {quoted}: Yama's ptrace_scope forbids one rank reading another's memory"),
                      fix=_PTRACE_FIX, evidence=ticket_evidence(s))
        return
    scope = f.get("system.ptrace_scope")
    if isinstance(scope, int) and scope >= 2:
        yield Hit(message=f"kernel.yama.ptrace_scope is {scope}: no MPI rank may read another's memory (CMA), so "
                          "Open MPI, UCX and MPICH copy large intra-node messages twice and Intel MPI 2018 aborts",
                  fix=_PTRACE_FIX, evidence={"system.ptrace_scope": scope}, severity="info")
_HWLOC_FIX = ("ompi_info | grep -i 'MCA hwloc'   # \"hwloc201\": Open MPI's internal hwloc 2.0; \"external\": the system's\n"
              "stat -fc %T /sys/fs/cgroup   # cgroup2fs: this node uses cgroup v2, which hwloc reads from 2.2 on\n"
              "srun grep Cpus_allowed_list /proc/self/status   # inside the job: the CPUs Slurm's cgroup gives each task\n"
              "mpirun --bind-to none ./app   # meanwhile: Open MPI binds nothing, Slurm's cgroup still confines the job\n"
              "./configure --prefix=\"$HOME/openmpi\" --with-hwloc=external --with-slurm && make -j 8 install   "
              "# rebuild Open MPI against the system's hwloc (2.2 or later)")


@rule("NET019", "mpi-internal-hwloc-incompatible", "warning",
      "Open MPI bound a rank to CPUs the job may not use: its hwloc does not see the job's cgroup", impact=7)
def mpi_internal_hwloc_incompatible(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, Open MPI 4.x's "Open MPI tried to bind a new process, but something went
        wrong" (or its "not bound" warning) whose error message is "hwloc_set_cpubind returned
        "Error" for bitmap "N,M"": the kernel refused the CPUs Open MPI chose for a rank.

    Why it matters:
        Open MPI maps ranks onto the CPUs its hwloc reports as allowed. When that view is wider
        than the job's cgroup, it picks CPUs the job does not own and the kernel refuses the
        binding; the job aborts, typically only when it does not fill the node. Open MPI 4.x
        builds its internal hwloc 2.0.x when configure finds no system hwloc, and hwloc reads
        Linux cgroup v2 only from 2.2 on, so under Slurm's task/cgroup on a cgroup v2 node it
        cannot see the job's CPUs. The message alone does not prove which hwloc was built in:
        ompi_info shows it, and stat -fc %T /sys/fs/cgroup the cgroup version.

    How to fix:
        Check the hwloc component (ompi_info: hwloc201 is the internal copy) and the cgroup
        version; rebuild Open MPI with --with-hwloc=external against hwloc 2.2 or later (or use
        Open MPI 5, which bundles hwloc 2.7.1); meanwhile run with --bind-to none.

    References:
        - https://github.com/open-mpi/ompi/blob/v4.1.7/orte/mca/rtc/hwloc/rtc_hwloc.c (the message)
        - https://github.com/open-mpi/ompi/blob/v4.1.7/opal/mca/hwloc/hwloc201/hwloc/VERSION (internal hwloc 2.0.2)
        - https://github.com/open-mpi/ompi/blob/v4.1.7/README (--with-hwloc=internal|external|DIR)
        - https://github.com/open-mpi/hwloc/blob/3b37b024aa3fe368dd82008eea7e1ad9dca97d2c/NEWS (Version 2.2.0: "Add support for Linux cgroups v2")
        - https://github.com/open-mpi/ompi/tree/v5.0.9/3rd-party (hwloc-2.7.1.tar.gz)
        - https://github.com/open-mpi/ompi/issues/12470 (Slurm 23.11 task/cgroup, HPC-X's Open MPI 4.1.7)
    """
    told = catalogued(f, "mpi-internal-hwloc-incompatible")
    if not told:
        return
    s = told[0]
    bitmap = f" ({s['bitmap']})" if s.get("bitmap") else ""
    yield Hit(message=f"the kernel refused the CPUs{bitmap} Open MPI chose for a rank (line {s['line']}: "
                      f"\"{told_text(s)}\"): Open MPI's view of the allowed CPUs is wider than "
                      "the job's cgroup; the usual cause is Open MPI 4.x built with its internal hwloc 2.0, which "
                      "cannot read cgroup v2 (hwloc 2.2 can)",
              fix=_HWLOC_FIX, evidence=ticket_evidence(s))


# The socket path limit: sun_path holds 108 bytes on Linux (104 on macOS), and each of these
# messages prints the directory that did not fit (knowledge/messages/openmpi.toml).
_SUN_PATH = 108


# Who built the socket path, and where its directory comes from (knowledge/messages/unix_socket_path.toml).
_UNDER_TMPDIR = ("mkdir -p \"/tmp/$USER\" && export TMPDIR=\"/tmp/$USER\"   # where the program builds its socket under "
                 "TMPDIR; else give it a shorter socket path or directory")
_SOCKET_OWNER = {
    "unix_socket_path:ray-socket-path-too-long": (
        "Ray could not create the socket of its session directory",
        "mkdir -p \"/tmp/$USER\" && export TMPDIR=\"/tmp/$USER\"   # before the script or ray start: Ray builds "
        "<temp dir>/ray/session_<date>_<pid>/sockets/ under TMPDIR\n"
        "ray start --head --temp-dir=\"/tmp/ray-$USER\"   # a cluster started by hand: a short temp dir (in Python: "
        "ray.init(_temp_dir=...) with a short absolute path)"),
    "unix_socket_path:cpython-af-unix-path-too-long": ("Python's socket module refused a Unix-domain socket path",
                                                        _UNDER_TMPDIR),
    "unix_socket_path:rust-std-sun-len": ("a Rust program refused a Unix-domain socket path", _UNDER_TMPDIR),
    "unix_socket_path:postgres-socket-path-too-long": (
        "PostgreSQL could not use its Unix-domain socket",
        "echo \"unix_socket_directories = '/tmp'\" >> \"$PGDATA/postgresql.conf\"   # the server's socket in a short "
        "directory; restart it\n"
        "psql -h /tmp   # clients name that directory as the host"),
}


def _socket_path_hit(s: dict) -> Hit:
    who, fix = _SOCKET_OWNER.get(str(s.get("id")), _SOCKET_OWNER["unix_socket_path:cpython-af-unix-path-too-long"])
    path = str(s.get("path") or "")
    size = len(path.encode("utf-8"))
    limit = int(s.get("limit") or _SUN_PATH - 1)
    cut = f"{path[:90]}{'...' if len(path) > 90 else ''}"
    # a user who masks part of the path ("/nfs/XXX/...") pastes fewer bytes than the program measured
    shown = ("" if not path else f" ({size} bytes: {cut})" if size > limit
             else f" ({cut}, shortened in the paste: {size} bytes as pasted)")
    return Hit(message=(f"{who} (line {s['line']}): its path{shown} is longer than a Unix-domain socket path may be, "
                        f"{limit} bytes (107 on Linux, 103 on macOS); it is built under a deep temporary or work "
                        "directory"),
               fix=fix, evidence=told_evidence(s))


@rule("SYS052", "tmpdir-path-too-long-for-socket", "error",
      "a Unix-domain socket built under a deep temporary or work directory is too long (MPI, Ray, ssh)", impact=7)
def tmpdir_path_too_long_for_socket(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, PMIx 1.2's "PMIx has detected a temporary directory name that results in a
        path that is too long for the Unix domain socket" (Open MPI 2.0 and 2.1 bundle it:
        src/server/pmix_server.c, printed with fprintf), PMIx 2 and 3's "The PMIx server was
        unable to setup a rendezvous file due to your system's restriction for Unix's socket's
        path-length" (help-pmix-server.txt [rnd-path-too-long], the PMIx of Open MPI 3 and 4), and
        ORTE's "The call to pmix_init_server() failed. This may be due to your system's restriction
        for Unix's socket's path-length" (help-orterun.txt [orterun:pmix-failed]). The same limit in
        OpenSSH's words ("unix_listener: path ... too long for Unix domain socket", "ControlPath too
        long (... >= 108 bytes)": misc.c, mux.c), a ControlMaster socket that a launcher's ssh uses,
        is answered with ssh's own fix. Outside MPI: Ray's "AF_UNIX path length cannot exceed 107
        bytes: '<temp dir>/ray/session_.../sockets/plasma_store'" (its node.py checks the path
        before it starts), CPython's "AF_UNIX path too long", Rust std's "path must be shorter than
        SUN_LEN" and PostgreSQL's "Unix-domain socket path ... is too long (maximum 107 bytes)".

    Why it matters:
        mpirun's PMIx server listens on a Unix-domain socket in the job's session directory under
        TMPDIR, and a socket's path must fit in sun_path: 108 bytes on Linux, 104 on macOS. A TMPDIR
        set to a deep work directory (a workflow manager's task directory, a Singularity/Apptainer
        job that inherits the host's TMPDIR, a macOS /var/folders path) makes the path too long and
        mpirun stops before any rank starts. PMIx 4 and 5 (Open MPI 5) rendezvous over TCP and do
        not have this limit.

    How to fix:
        Point TMPDIR at a short node-local directory before mpirun (export TMPDIR=/tmp), in the job
        script or the workflow's process definition. Inside Apptainer or Singularity set it for the
        container (apptainer exec --env TMPDIR=/tmp ...), /tmp being the host's unless the site
        mounts it otherwise. For ssh, a ControlPath of ~/.ssh/cm-%C (a hash of the connection).

    References:
        - https://github.com/openpmix/openpmix/blob/v1.2.5/src/server/pmix_server.c
        - https://github.com/open-mpi/ompi/blob/v4.1.8/opal/mca/pmix/pmix3x/pmix/src/server/help-pmix-server.txt
        - https://github.com/open-mpi/ompi/blob/v4.1.8/orte/tools/orterun/help-orterun.txt
        - https://man7.org/linux/man-pages/man7/unix.7.html (sun_path: 108 bytes on Linux)
        - https://github.com/rnajena/poseidon/issues/31 (TMPDIR set to a Nextflow work directory)
        - https://github.com/open-mpi/ompi/pull/1528 (macOS's long TMPDIR)
        - https://github.com/openssh/openssh-portable/blob/V_10_5_P1/misc.c (unix_listener)
        - https://man.openbsd.org/ssh_config#ControlPath
        - https://github.com/ray-project/ray/blob/master/python/ray/_private/node.py (_prepare_socket_file: 107 bytes on Linux)
        - https://github.com/python/cpython/blob/main/Modules/socketmodule.c (getsockaddrarg: "AF_UNIX path too long")
        - https://github.com/volcengine/verl/issues/1120 (Ray's sockets under a Slurm job's temporary directory)
    """
    told = catalogued(f, "tmpdir-path-too-long-for-socket")
    if not told:
        return
    mpi = [t for t in told if t.get("family") not in ("openssh", "unix_socket_path")]
    other = [t for t in told if t.get("family") == "unix_socket_path"]
    if not mpi and other:
        yield _socket_path_hit(next((t for t in other if t.get("path")), other[0]))
        return
    if not mpi:
        s = told[0]
        path = str(s.get("path") or "")
        shown = f" ({len(path)} bytes: {path[:90]}{'...' if len(path) > 90 else ''})" if path else ""
        yield Hit(message=(f"ssh could not use its Unix-domain socket (line {s['line']}): the socket's path{shown} is "
                           f"longer than a socket path may be, {_SUN_PATH} bytes on Linux and 104 on macOS; a "
                           "ControlPath built from the user, host and port (%r@%h:%p) is the usual one"),
                  fix=("ssh -o ControlPath=~/.ssh/cm-%C HOST true   # %C: a hash of the connection, always short; "
                       "put ControlPath ~/.ssh/cm-%C in ~/.ssh/config where the long one was set"),
                  evidence=told_evidence(s))
        return
    s = next((t for t in mpi if t.get("tmpdir")), mpi[0])
    path = s.get("tmpdir")
    shown = (f" ({len(path)} bytes before the socket's own name: {path[:90]}{'...' if len(path) > 90 else ''})"
             if path else "")
    maybe = "may not have fit" if s.get("id") == "openmpi:orterun:pmix-failed" else "did not fit"
    yield Hit(message=(f"mpirun's PMIx server could not create its Unix-domain socket (line {s['line']}): the "
                       f"session directory under TMPDIR{shown} {maybe} in a socket path, which holds "
                       f"{_SUN_PATH} bytes on Linux and 104 on macOS"),
              fix=("export TMPDIR=/tmp   # or a short node-local directory; set it before mpirun, in the job script\n"
                   "apptainer exec --env TMPDIR=/tmp IMAGE mpirun ...   # inside Apptainer/Singularity: "
                   "a short TMPDIR for the container too"),
              evidence=told_evidence(s))


@rule("NET044", "pmix-compression-mismatch-between-nodes", "error",
      "the nodes of one mpirun run Open MPI or PMIx installations that differ in compression support", impact=7)
def pmix_compression_mismatch_between_nodes(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, Open MPI 4.1's "A compressed message was received by the Open MPI run time
        system (PMIx) that could not be decompressed. This means that Open MPI has compression
        support enabled on one node and not enabled on another." (help-orte-runtime.txt
        [failed-to-uncompress]) or PRRTE's "A compressed message was received that could not be
        decompressed. This is most likely due to a missing libz library on the receiving node"
        (Open MPI 5, help-prte-runtime.txt [failed-to-uncompress]).

    Why it matters:
        mpirun compresses the launch message it sends to the daemons of the other nodes when its own
        runtime has zlib support. A daemon whose Open MPI (or PRRTE/PMIx) was built without zlib, or
        cannot find libz at run time, cannot read it and the job aborts before any rank starts. It
        means the nodes do not run the same installation: another Open MPI found first on a node's
        PATH, or one built on a host without zlib's headers.

    How to fix:
        Make the same Open MPI, with zlib, the one every node runs: install it at the same path on
        every node (or on a shared file system) and start it with mpirun --prefix, which makes the
        remote daemons use that installation, or load the same module in the job's environment on
        every node. Check on each node which orted/prted the remote shell finds and that libz is
        present.

    References:
        - https://github.com/open-mpi/ompi/blob/v4.1.8/orte/runtime/help-orte-runtime.txt
        - https://github.com/openpmix/prrte/blob/v3.0.14/src/docs/show-help-files/help-prte-runtime.txt
        - https://github.com/openpmix/openpmix/issues/2176 (one node's Open MPI 4 with libz, another's without)
        - https://github.com/open-mpi/ompi/issues/11846
    """
    told = catalogued(f, "pmix-compression-mismatch-between-nodes")
    if not told:
        return
    s = told[0]
    yield Hit(message=(f"a node's Open MPI daemon could not decompress mpirun's launch message (line {s['line']}): the "
                       "nodes run Open MPI/PMIx installations that differ in compression (zlib) support, so they do "
                       "not all run the same installation"),
              fix=("ssh NODE 'command -v orted prted; ldconfig -p | grep libz.so'   # on each node of the job: the "
                   "same Open MPI, and libz present\n"
                   "mpirun --prefix \"$(dirname \"$(dirname \"$(command -v mpirun)\")\")\" ...   # remote daemons "
                   "from this installation (installed at the same path on every node), or the same module loaded "
                   "on every node"),
              evidence=told_evidence(s))


@rule("NET045", "pmix-compression-library-unavailable", "info",
      "PMIx found no compression library: a harmless warning, the job continues", impact=1)
def pmix_compression_library_unavailable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, PMIx's "PMIx was unable to find a usable compression library on the system.
        We will therefore be unable to compress large data streams ... We will continue"
        (help-pcompress.txt [unavailable], PMIx 4.2 and 5, the PMIx of Open MPI 5).

    Why it matters:
        It is a warning, not an error: the PMIx in use was built without its zlib component, so
        large launch messages go uncompressed (a slower start on many nodes, more memory); the job
        runs. A failure in the same paste has another cause. Where the nodes differ (one with zlib,
        one without) Open MPI says so in its own words (pmix-compression-mismatch-between-nodes).

    How to fix:
        Nothing is required. To silence it, set PMIX_MCA_pcompress_base_silence_warning=1 in the
        environment (or pcompress_base_silence_warning=1 in PMIx's MCA parameter file). To have
        compression, build PMIx (or Open MPI with its bundled PMIx) with zlib's development files
        installed.

    References:
        - https://github.com/openpmix/openpmix/blob/v5.0.11/src/mca/pcompress/base/help-pcompress.txt
        - https://github.com/openpmix/openpmix/blob/v5.0.11/src/mca/pcompress/base/pcompress_base_frame.c
        - https://github.com/openpmix/openpmix/issues/3351 (the maintainer: the message says how to silence it)
    """
    told = catalogued(f, "pmix-compression-library-unavailable")
    if not told:
        return
    s = told[0]
    yield Hit(message=(f"PMIx warns that it found no compression library (line {s['line']}): harmless, the job "
                       "continues with large launch messages uncompressed; it is not the cause of a failure"),
              fix=("export PMIX_MCA_pcompress_base_silence_warning=1   # silences the warning; nothing else is needed\n"
                   "# for compression: rebuild PMIx (or Open MPI with its bundled PMIx) with zlib's development "
                   "package installed"),
              evidence=told_evidence(s))
