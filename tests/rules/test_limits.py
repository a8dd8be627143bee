"""The rules of rules/limits.py: Slurm ending a job (time limit, preemption, node failure), a disk
quota or a full file system, and the process and thread limit, on verbatim cuts of public threads
(tests/fixtures/pastes, SOURCES.md there) and the blind set's tickets; the live checks on facts
the way checks/limits.py records them."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulekit import fired, recorded_paste_facts, run_rule
from hpcdoctor.triage.paste import open_paste
from hpcdoctor import pipeline
from hpcdoctor.runner import Options

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def ticket_facts(corpus: str, name: str):
    with open_paste([str(FIXTURES / corpus / f"{name}.txt")]) as (root, _recognised, _notes):
        return pipeline.gather(root, Options())


def quiet(symbol, g):
    findings, _skipped = run_rule(symbol, g)
    return findings == []


def silent_slurm(g):
    for sym in ("slurm-time-limit", "slurm-job-preempted", "slurm-node-failure"):
        assert not fired(sym, g), sym


# ---- Slurm -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,job,line", [("c3nl-cluster-19-partition-time-limit", "602025", 13),
                                           ("canu-1052-subjobs-default-time-limit", "3884617", 9)])
def test_time_limit_from_the_blind_sets_tickets(name, job, line):
    (f,) = fired("slurm-time-limit", ticket_facts("tickets_blind_f", name))
    assert f"line {line}" in f.message and "time limit" in f.message
    assert f.fix.startswith(f"sacct -j {job} -o JobID,State,Elapsed,Timelimit")
    assert "#SBATCH --time=" in f.fix and "MaxTime" in f.fix


def test_time_limit_of_a_step_names_the_job_not_the_step():
    (f,) = fired("slurm-time-limit", recorded_paste_facts("desitarget-628-srun-step-time-limit-terminated.txt"))
    assert "line 5" in f.message
    assert f.fix.startswith("sacct -j 32233190 ")


def test_time_limit_after_srun_aborts_the_step():
    (f,) = fired("slurm-time-limit", recorded_paste_facts("zetta-utils-671-slurm-time-limit-step.txt"))
    assert "line 4" in f.message and "sacct -j 494583 " in f.fix


def test_slurm_14_puts_the_node_last():
    (f,) = fired("slurm-time-limit", recorded_paste_facts("canu-1067-slurm14-time-limit-node-last.txt"))
    assert "sacct -j 830329 " in f.fix


def test_preemption_is_not_a_time_limit():
    g = recorded_paste_facts("gemmaker-242-slurm-preemption.txt")
    (f,) = fired("slurm-job-preempted", g)
    assert "preempted" in f.message and "line 2" in f.message
    assert f.fix.startswith("sacct -j 32391783 ") and "--requeue" in f.fix
    assert not fired("slurm-time-limit", g) and not fired("slurm-node-failure", g)


def test_a_job_the_user_cancelled_is_no_limit():
    silent_slurm(recorded_paste_facts("bcbio-741-scancel-cancelled.txt"))


def test_tasks_terminated_alone_say_no_cause():
    # srun's "tasks ...: Terminated" without slurmstepd's line: how, not why.
    text = (FIXTURES / "pastes" / "desitarget-628-srun-step-time-limit-terminated.txt").read_text()
    kept = "\n".join(line for line in text.splitlines() if "DUE TO" not in line)
    from rulekit import paste_facts
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        g = paste_facts(Path(d), kept)
    silent_slurm(g)


def test_node_failure_names_the_node():
    g = recorded_paste_facts("soperator-854-salloc-node-failure.txt")
    (f,) = fired("slurm-node-failure", g)
    assert "line 10" in f.message and "node of its allocation failed" in f.message
    assert "scontrol show node worker-1" in f.fix and "--exclude=worker-1" in f.fix
    assert f.fix.startswith("sacct -u $USER -S now-7days -s NODE_FAIL")
    assert not fired("slurm-time-limit", g)


# ---- file systems ------------------------------------------------------------------------------

def test_quota_names_the_path_and_the_cache_that_fills_home():
    (f,) = fired("home-quota-exceeded", ticket_facts("tickets_blind_f", "autosubmit-596-home-quota-exceeded"))
    assert "/home/pr1eld00/pr1eld24/.cache/matplotlib" in f.message and "XDG_CACHE_HOME" in f.message
    assert "line 7" in f.message  # the traceback's line, not the title above it that names no path
    assert f.fix.startswith("quota -s") and "lfs quota" in f.fix and "export HF_HOME=" in f.fix


def test_quota_from_git_and_bash():
    g = ticket_facts("tickets_blind_f", "cmc-csci143-459-home-quota-full")
    (f,) = fired("home-quota-exceeded", g)
    assert "line 7" in f.message and "could not create work tree dir" in f.message
    assert quiet("disk-full", g)


def test_pip_out_of_space():
    g = recorded_paste_facts("hackgpt-9-pip-no-space-left.txt")
    (f,) = fired("disk-full", g)
    assert "line 5" in f.message and "Errno 28" in f.message
    assert f.fix.startswith('df -h "${TMPDIR:-/tmp}" "$HOME" .') and "TMPDIR=" in f.fix
    assert not fired("home-quota-exceeded", g)


@pytest.mark.parametrize("corpus,name", [
    ("tickets", "nccl-342-docker-shm-no-space"),
    ("tickets", "hopsworks-1557-dataloader-shm-no-space-k8s"),
    ("tickets", "pytorch-40622-nccl273-posix-fallocate-ci"),
    ("tickets", "pytorch-ci-infra-490-nccl-shm-extend-no-space"),
    ("tickets_blind_c", "eslam-20-unable-to-write-no-space-shm"),
])
def test_a_full_dev_shm_is_shm_too_small_not_a_full_disk(corpus, name):
    g = ticket_facts(corpus, name)
    assert quiet("disk-full", g)
    assert fired("shm-too-small", g)


# ---- processes and threads ---------------------------------------------------------------------

def test_openblas_names_its_rlimit_nproc():
    (f,) = fired("nproc-limit-too-low", ticket_facts("tickets_blind_f", "worms-2-openblas-rlimit-nproc-512"))
    assert f.severity == "warning"
    assert "RLIMIT_NPROC 512 (hard 1031280)" in f.message
    assert f.fix.startswith("ulimit -u 1031280") and "OPENBLAS_NUM_THREADS=1" in f.fix


def test_openblas_without_numbers_still_reads_eagain():
    # pthread_create's EAGAIN with no limit printed: the process limit or memory for the stack, both named
    (f,) = fired("nproc-limit-too-low", ticket_facts("tickets_blind_f", "fslr-14-openblas-rlimit-nproc"))
    assert f.severity == "info" and "line 1" in f.message and "memory" in f.message
    assert "pids.max" in f.fix and "overcommit_memory" in f.fix and "ulimit -u $(ulimit -Hu)" in f.fix


@pytest.mark.parametrize("paste,line", [("unicycler-127-cant-start-new-thread.txt", 5),
                                        ("cmc-csci143-283-bash-fork-retry.txt", 3),
                                        ("cmc-csci143-59-go-newosproc-errno11.txt", 2)])
def test_python_and_bash_cannot_start_more(paste, line):
    (f,) = fired("nproc-limit-too-low", recorded_paste_facts(paste))
    assert f"line {line}" in f.message and "ulimit -u" in f.message
    # fork's and Go's clone EAGAIN come from the kernel's task counts; CPython's is pthread_create's
    assert f.severity == ("info" if paste.startswith("unicycler") else "error")
    if f.severity == "error":
        # the kernel's EAGAIN is a count reached, which a runaway reaches too: the fix shows who holds the tasks
        assert "uniq -c | sort -rn" in f.fix and "runaway" in f.fix


@pytest.mark.parametrize("text", ["libgomp: Thread creation failed: Cannot allocate memory\n",
                                  "runtime: failed to create new OS thread (have 9 already; errno=12)\n",
                                  "OMP: System error #12: Cannot allocate memory\n"])
def test_a_thread_refused_for_memory_is_not_the_process_limit(tmp_path, text):
    # ENOMEM (memory for the thread's stack) in each emitter's words: not RLIMIT_NPROC
    from rulekit import paste_facts
    findings, _ = run_rule("nproc-limit-too-low", paste_facts(tmp_path, text))
    assert findings == []


# ---- live: the facts checks/limits.py records --------------------------------------------------

from rulekit import facts  # noqa: E402

GIB = 2 ** 30


def _fs(free_bytes, free_inodes=10 ** 6, roles=("HOME", "HF_HOME"), path="/home/u"):
    return {"roles": list(roles), "paths": [path, path + "/.cache/huggingface"], "mount_probe": path,
            "size_bytes": 100 * GIB, "free_bytes": free_bytes, "total_inodes": 10 ** 7, "free_inodes": free_inodes}


def test_live_file_system_below_one_torch_install_is_a_warning():
    g = facts("cpu-kvm-2core", **{"limits.filesystems": [_fs(10 * GIB, path="/tmp", roles=("TMPDIR",)), _fs(300 * 2 ** 20)]})
    (f,) = fired("disk-full", g)
    assert f.severity == "warning" and "HOME, HF_HOME (/home/u)" in f.message and "300 MiB free" in f.message
    assert f.fix.startswith("df -h /home/u; df -i /home/u")


def test_live_file_system_out_of_inodes_is_full():
    (f,) = fired("disk-full", facts("cpu-kvm-2core", **{"limits.filesystems": [_fs(50 * GIB, free_inodes=0)]}))
    assert f.severity == "error" and "0 inodes free" in f.message and "full" in f.message


def test_live_file_systems_with_room_say_nothing():
    assert not fired("disk-full", facts("cpu-kvm-2core", **{"limits.filesystems": [_fs(50 * GIB, free_inodes=None)]}))


def test_free_space_unknown_is_skipped_not_passed():
    from hpcdoctor.facts import Unknown
    g = facts("cpu-kvm-2core")
    g["facts"].setdefault("limits", {})["filesystems"] = Unknown("free space not read: probe statvfs_write_dirs was not recorded")
    g["unknown"]["limits.filesystems"] = "free space not read: probe statvfs_write_dirs was not recorded"
    findings, skipped = run_rule("disk-full", g)
    assert findings == [] and skipped and "not recorded" in str(skipped)


def _nproc(soft, hard=4096, uid=1000):
    return {"soft": soft, "hard": hard, "uid": uid}


def test_live_nproc_below_ranks_times_threads():
    g = facts("cpu-kvm-2core", **{"limits.nproc": _nproc(100), "env.vars.OMP_NUM_THREADS": "32",
                                  "scheduler.tasks_per_node": 4})
    (f,) = fired("nproc-limit-too-low", g)
    assert f.severity == "warning" and "ulimit -u is 100" in f.message and "4 rank(s) × OMP_NUM_THREADS=32 = 128" in f.message
    assert f.fix.startswith("ulimit -u 4096")


def test_live_nproc_at_its_hard_limit_is_the_sites():
    g = facts("cpu-kvm-2core", **{"limits.nproc": _nproc(100, 100), "env.vars.OMP_NUM_THREADS": "32",
                                  "scheduler.tasks_per_node": 4})
    (f,) = fired("nproc-limit-too-low", g)
    assert f.fix.startswith("export OMP_NUM_THREADS=1") and "administrators" in f.fix


@pytest.mark.parametrize("nproc", [_nproc(100, uid=0), _nproc(None, None), _nproc(4096)])
def test_live_nproc_root_unlimited_or_enough(nproc):
    g = facts("cpu-kvm-2core", **{"limits.nproc": nproc, "env.vars.OMP_NUM_THREADS": "32", "scheduler.tasks_per_node": 4})
    assert not fired("nproc-limit-too-low", g)


# ---- the check itself, and a snapshot's round trip ---------------------------------------------

def test_write_dirs_follow_each_tools_default():
    from hpcdoctor.checks.limits import write_dirs
    got = dict(write_dirs({"HOME": "/home/u", "TORCH_HOME": "/scratch/u/torch", "CONDA_PKGS_DIRS": "/p/pkgs,/q"}))
    assert got == {"HOME": "/home/u", "TMPDIR": "/tmp", "HF_HOME": "/home/u/.cache/huggingface",
                   "TORCH_HOME": "/scratch/u/torch", "PIP_CACHE_DIR": "/home/u/.cache/pip", "CONDA_PKGS_DIRS": "/p/pkgs"}
    got = dict(write_dirs({"HOME": "/home/u", "XDG_CACHE_HOME": "/s/c", "TRITON_CACHE_DIR": "/s/t", "TMPDIR": "/s/tmp"}))
    assert got["HF_HOME"] == "/s/c/huggingface" and got["PIP_CACHE_DIR"] == "/s/c/pip" and got["TRITON_CACHE_DIR"] == "/s/t"
    assert got["TMPDIR"] == "/s/tmp"
    assert dict(write_dirs({})) == {"TMPDIR": "/tmp"}


def test_one_record_per_file_system_and_missing_dirs_read_at_their_parent(tmp_path):
    from hpcdoctor.checks.limits import statvfs_dirs
    (tmp_path / "a").mkdir()
    got = statvfs_dirs([("HOME", str(tmp_path / "a")), ("HF_HOME", str(tmp_path / "not" / "yet"))])
    mine = [fs for fs in got if "HOME" in fs["roles"]]
    assert len(mine) == 1 and mine[0]["roles"][-2:] == ["HOME", "HF_HOME"]
    assert isinstance(mine[0]["free_bytes"], int) and mine[0]["size_bytes"] >= mine[0]["free_bytes"]


def test_a_probe_that_was_not_recorded_is_unknown():
    from hpcdoctor.checks import limits
    from hpcdoctor.facts import Unknown
    from hpcdoctor.sysroot import Missing

    class Root:
        def environ(self):
            return {"HOME": "/home/u"}

        def probe(self, name, fn):
            raise Missing(f"probe {name} was not recorded")

        def run(self, argv, live=True):   # nor a pasted limits listing (checks/limits.py reads one then)
            raise Missing(f"{argv} was not recorded")

    got = limits.collect(Root(), None)["limits"]
    assert isinstance(got["filesystems"], Unknown) and isinstance(got["nproc"], Unknown)


def test_record_then_replay_gives_the_same_finding(tmp_path, monkeypatch):
    from hpcdoctor.rules import limits as rule_module
    from hpcdoctor.sysroot import RecordingSysRoot, ReplaySysRoot

    root = RecordingSysRoot(tmp_path / "snap")
    recorded = pipeline.gather(root, Options())
    root.finish({"checks": recorded["checks"]})
    replayed = pipeline.gather(ReplaySysRoot(tmp_path / "snap"), Options())
    assert replayed["facts"]["limits"] == recorded["facts"]["limits"]
    # thresholds no file system meets, so that this machine gives a finding to compare
    monkeypatch.setattr(rule_module, "_disk_limits", lambda: (2 ** 62, 2 ** 62))
    live = [f.message for f in fired("disk-full", recorded)]
    assert live and live == [f.message for f in fired("disk-full", replayed)]


@pytest.mark.parametrize("fs_data,nproc_data", [
    ("not a list", ["not", "a", "record"]),
    ([1, None, {"roles": "HOME", "free_bytes": float("nan"), "free_inodes": True, "paths": [7, "/x" * 1000]}],
     {"soft": -5, "hard": "lots", "uid": float("inf")}),
    ([{"roles": ["HOME"], "paths": ["/h"], "free_bytes": 0, "free_inodes": None}] * 10000, {"soft": 10, "hard": 20, "uid": 1000}),
])
def test_a_hostile_recording_is_bounded_and_judged_without_a_traceback(fs_data, nproc_data):
    # A snapshot's probes are untrusted: whatever they hold, the facts keep statvfs_dirs' shape.
    from hpcdoctor.checks import limits

    class Root:
        def environ(self):
            return {}

        def probe(self, name, fn):
            return fs_data if name == "statvfs_write_dirs" else nproc_data

    got = limits.collect(Root(), None)["limits"]
    systems = got["filesystems"]
    assert not isinstance(systems, list) or (len(systems) <= 64 and all(
        isinstance(fs["free_bytes"], (int, type(None))) and all(len(p) <= 300 for p in fs["paths"]) for fs in systems))
    g = facts("cpu-kvm-2core", **{"limits.filesystems": systems, "limits.nproc": got["nproc"]})
    for sym in ("disk-full", "nproc-limit-too-low"):
        _findings, skipped = run_rule(sym, g)
        assert not any("rule failed" in str(s) for s in skipped), skipped


def test_a_file_system_statvfs_could_not_read_is_skipped_not_passed():
    unreadable = {"roles": ["HF_HOME"], "paths": ["/gpfs/x"], "error": "Permission denied"}
    g = facts("cpu-kvm-2core", **{"limits.filesystems": [_fs(50 * GIB), unreadable]})
    findings, skipped = run_rule("disk-full", g)
    assert findings == [] and "HF_HOME (Permission denied)" in str(skipped)
    # one that is low is still said
    assert fired("disk-full", facts("cpu-kvm-2core", **{"limits.filesystems": [_fs(0), unreadable]}))


def test_mpi_io_no_space_class_is_a_full_disk():
    # MPICH's fatal-error line for MPI_ERR_NO_SPACE, the class ROMIO's ADIOI_Err_create_code gives ENOSPC
    # (pmodels/mpich src/mpi/romio/adio/common/error.c; errutil.c's "Fatal error in %s: ")
    from hpcdoctor.triage.messages import find_messages
    said = find_messages("Fatal error in PMPI_File_write_all: Not enough space for file, error stack:\n")
    (f,) = fired("disk-full", facts("h100-kvm-1gpu", **{"ticket.symptoms": said}))
    assert f.severity == "error" and "a file system was full (line 1" in f.message
