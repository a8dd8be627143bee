"""Catalogue entries of the MPI and batch families that hpcdoctor read but no rule answered, now
answered by the rule that states their diagnosis (the audit of `rules = []`): MPICH's own-host
gethostbyname failure (hostname-not-in-etc-hosts), UCX's full /dev/shm (shm-too-small), UCX's
ibv_reg_mr ENOMEM beside a finite locked-memory limit (mpi-memlock-limit), PBS's Exit_status=280,
SIGXCPU (batch-job-cpu-time-limit-exceeded). Where no public paste holds a wording, the test fills
in the emitter's own format string and says so."""

from __future__ import annotations

from rulekit import PASTES, fired, paste_facts, recorded_paste_facts, run_rule


# -- MPICH: gethostbyname of the node's own name (a real paste, MPICH 3.3 on a Mac) -------------

def test_mpich_gethostbyname_failed_is_the_own_name_unresolved_with_macos_commands():
    (f,) = fired("hostname-not-in-etc-hosts", recorded_paste_facts("amica-11-mpich-gethostbyname-failed.txt"))
    assert "MPICH's TCP module" in f.message and "(Mac)" in f.message
    # the user says it is a Mac: macOS's commands and its loopback address, not getent and Debian's 127.0.1.1
    assert "scutil --get LocalHostName" in f.fix and '"127.0.0.1 Mac"' in f.fix and "getent" not in f.fix


def test_mpich_gethostbyname_on_linux_keeps_the_linux_fix(tmp_path):
    # MPICH's format (src/mpid/ch3/channels/nemesis/netmod/tcp/tcp_init.c, **gethostbyname %s %d) filled in
    text = ("Fatal error in MPI_Init: Other MPI error, error stack:\n"
            "MPID_nem_tcp_init(384).............: gethostbyname failed, node017 (errno 1)\n")
    (f,) = fired("hostname-not-in-etc-hosts", paste_facts(tmp_path, text))
    assert "(node017)" in f.message and "getent hosts node017" in f.fix


def test_the_same_stack_without_its_gethostbyname_line_is_not_the_own_name(tmp_path):
    # the real paste cut before its last stack line, and the words in a sentence (not a stack line)
    lines = (PASTES / "amica-11-mpich-gethostbyname-failed.txt").read_text().splitlines()
    text = "\n".join(ln for ln in lines if "gethostbyname" not in ln) + "\n"
    text += "I think the gethostbyname failed and the channel initialization failed on my laptop\n"
    findings, _skipped = run_rule("hostname-not-in-etc-hosts", paste_facts(tmp_path, text))
    assert not findings   # no line read; the node's own lookup is not in a paste (unknown, not a pass)


# -- UCX: the posix shared-memory transport's ENOSPC ---------------------------------------------

# UCX v1.22.0 src/uct/sm/mm/posix/mm_posix.c uct_posix_test_mem, its format filled in under UCX's log prefix
UCX_SHM_FULL = ("[1700000000.123456] [node1:12345:0]       mm_posix.c:195  UCX  ERROR Not enough memory to write "
                "total of 1048576 bytes. Please check that /dev/shm or the directory you specified has more available memory.\n")


def test_ucx_shm_no_space_is_dev_shm_full(tmp_path):
    (f,) = fired("shm-too-small", paste_facts(tmp_path, UCX_SHM_FULL))
    assert "UCX's shared-memory transport" in f.message and "/dev/shm" in f.message
    assert f.fix.startswith('df -h /dev/shm "${UCX_POSIX_DIR:-/dev/shm}"')
    assert "num_workers" not in f.message   # not torch's DataLoader stopgap


def test_ucx_shm_stat_failure_is_not_a_full_dev_shm(tmp_path):
    text = ("[1700000000.123456] [node1:12345:0]       mm_posix.c:420  UCX  ERROR could not stat shared memory "
            "device /dev/shm (No such file or directory)\n")
    findings, _skipped = run_rule("shm-too-small", paste_facts(tmp_path, text))
    assert not findings   # /dev/shm missing or unreadable is not its size; the node's own size is not in a paste


# -- UCX: ibv_reg_mr with ENOMEM, read only beside a finite locked-memory limit -----------------

# UCX v1.22.0 src/uct/ib/base/ib_md.c uct_ib_md_print_mem_reg_err_msg, its format filled in
REG_MR_ENOMEM = ("[1700000000.123456] [node1:12345:0]          ib_md.c:437  UCX  ERROR ibv_reg_mr(address=0x7f3c2c000000, "
                 "length=8388608, access=0xf) failed: Cannot allocate memory\n")


def test_ucx_reg_mr_enomem_beside_a_64_kb_limit_is_the_memlock_limit(tmp_path):
    listing = (PASTES / "ulimit-four-shells-memlock-64k.txt").read_text().splitlines()[:18]
    (f,) = fired("mpi-memlock-limit", paste_facts(tmp_path, "\n".join(listing) + "\n" + REG_MR_ENOMEM))
    assert "current: 64 kB" in f.message and "ulimit -l" in f.fix


def test_ucx_reg_mr_alone_or_with_another_errno_is_not_the_memlock_limit(tmp_path):
    assert not fired("mpi-memlock-limit", paste_facts(tmp_path, REG_MR_ENOMEM))
    listing = (PASTES / "ulimit-four-shells-memlock-64k.txt").read_text().splitlines()[:18]
    efault = REG_MR_ENOMEM.replace("Cannot allocate memory", "Bad address")
    assert not fired("mpi-memlock-limit", paste_facts(tmp_path, "\n".join(listing) + "\n" + efault))


# -- PBS: Exit_status=280, 256+24 = SIGXCPU -------------------------------------------------------

def test_pbs_exit_status_280_is_the_cpu_time_limit_as_a_warning(tmp_path):
    # qstat -f's attribute line (openpbs src/cmds/qstat.c prt_attr), the value filled in
    text = "Job Id: 4242.pbs01\n    job_state = F\n    Exit_status = 280\n"
    (f,) = fired("batch-job-cpu-time-limit-exceeded", paste_facts(tmp_path, text))
    assert f.severity == "warning" and "CPU-time limit" in f.message
    assert "pcput=" in f.fix and "ulimit -St" in f.fix


def test_pbs_exit_status_271_sigterm_is_not_the_cpu_time_limit(tmp_path):
    text = "Job Id: 4242.pbs01\n    job_state = F\n    Exit_status = 271\n"
    assert not fired("batch-job-cpu-time-limit-exceeded", paste_facts(tmp_path, text))
