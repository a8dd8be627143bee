"""The real Slurm clients' refusals read back (rules/slurm_client_env.py): sacct on the test cluster,
which keeps no accounting storage (tests/slurm_cluster.py: AccountingStorageType=accounting_storage/none),
and srun and sbatch refusing what SLURM_* variables in their environment ask, before the controller
is asked. What each client prints is pasted to hpcdoctor as a user would."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from rulekit import fired, told_facts

pytestmark = pytest.mark.slow  # real daemons: munged, slurmctld, slurmd


def test_sacct_on_a_cluster_without_accounting_storage(slurm):
    res = slurm.run(["sacct", "-X"], timeout=30)
    assert res.returncode != 0 and "Slurm accounting storage is disabled" in res.stderr
    (f,) = fired("slurm-accounting-disabled", told_facts(f"$ sacct -X\n{res.stderr}"))
    assert "AccountingStorageType" in f.fix


def test_srun_refusing_memory_variables_an_outer_job_would_export(slurm):
    res = slurm.run(["srun", "hostname"], timeout=30, env={"SLURM_MEM_PER_CPU": "100", "SLURM_MEM_PER_NODE": "200"})
    assert res.returncode != 0 and "are mutually exclusive" in res.stderr
    (f,) = fired("slurm-inherited-env-conflict", told_facts(res.stderr))
    assert "SLURM_MEM_PER_CPU" in f.message


def test_sbatch_refusing_a_slurm_hostfile_it_cannot_read(slurm):
    missing = slurm.root / "jobs" / "no-such-hostfile"
    res = slurm.run(["sbatch", "--wrap", "true"], timeout=30, env={"SLURM_HOSTFILE": str(missing)})
    assert res.returncode != 0 and "Failure getting NodeNames from hostfile" in res.stderr
    (f,) = fired("slurm-inherited-env-conflict", told_facts(res.stderr))
    assert "SLURM_HOSTFILE" in f.message and "unset SLURM_HOSTFILE" in f.fix


def test_sbatch_array_past_the_default_max_array_size(slurm):
    # the test cluster keeps Slurm's default MaxArraySize (1001): index 1001 is refused by slurmctld
    res = slurm.run(["sbatch", "--array=1-1001", "--wrap", "true"], timeout=30)
    assert res.returncode != 0 and "Invalid job array specification" in res.stderr
    (f,) = fired("slurm-array-exceeds-max-array-size", told_facts(f"$ sbatch --array=1-1001 --wrap true\n{res.stderr}"))
    assert f.severity == "error" and "indices up to 1001" in f.message
    ok = slurm.run(["sbatch", "--array=0-1000", "--wrap", "true"], timeout=30)
    assert ok.returncode == 0, ok.stderr


def test_x11_without_a_cookie_stops_on_the_submitting_host(slurm, tmp_path):
    res = slurm.run(["srun", "--x11", "true"], timeout=30, env={"DISPLAY": "localhost:10.0",
                                                                 "XAUTHORITY": str(tmp_path / "none")})
    assert res.returncode != 0 and "Could not retrieve magic cookie" in res.stderr
    facts = told_facts(f"$ srun --x11 true\n{res.stderr}")
    assert "slurm_x11:no-magic-cookie" in {s["id"] for s in facts["facts"]["ticket"]["symptoms"]}
    assert not fired("slurm-request-names-unknown", facts)


@pytest.mark.skipif(shutil.which("xauth") is None, reason="xauth (to make a cookie) is not installed here")
def test_x11_on_a_cluster_without_prologflags_x11(slurm, tmp_path):
    # the test cluster's slurm.conf has no PrologFlags=X11: with a cookie, slurmctld refuses --x11
    xa = tmp_path / "xauthority"
    subprocess.run(["xauth", "-f", str(xa), "add", "localhost:10", "MIT-MAGIC-COOKIE-1",
                    "0123456789abcdef0123456789abcdef"], check=True)
    res = slurm.run(["srun", "--x11", "true"], timeout=30, env={"DISPLAY": "localhost:10.0", "XAUTHORITY": str(xa)})
    assert res.returncode != 0 and "X11 forwarding not available" in res.stderr
    (f,) = fired("slurm-request-names-unknown", told_facts(f"$ srun --x11 true\n{res.stderr}"))
    assert "PrologFlags=X11" in f.message and "PrologFlags" in f.fix


def test_sbatch_refused_when_slurmctld_cannot_write_its_state_save_location(slurm):
    # slurmctld runs as root here, so permissions cannot stop it: files in place of the hash.N
    # directories make job_mgr.c's mkdir(StateSaveLocation/hash.N/job.ID) fail (ENOTDIR), the same
    # ESLURM_WRITING_TO_FILE a full or read-only StateSaveLocation gives.
    state = slurm.root / "state"
    moved = []
    try:
        for n in range(10):
            d = state / f"hash.{n}"
            if d.exists():
                d.rename(state / f"hash.{n}.kept")
                moved.append(n)
            d.write_text("")
        res = slurm.run(["sbatch", "--wrap", "true"], timeout=30)
    finally:
        for n in range(10):
            (state / f"hash.{n}").unlink(missing_ok=True)
            if n in moved:
                (state / f"hash.{n}.kept").rename(state / f"hash.{n}")
    assert res.returncode != 0 and "I/O error writing script/environment to file" in res.stderr
    (f,) = fired("disk-full", told_facts(f"$ sbatch --wrap true\n{res.stderr}"))
    assert f.severity == "warning" and "StateSaveLocation" in f.message and "StateSaveLocation" in f.fix
    ok = slurm.run(["sbatch", "--wrap", "true"], timeout=30)
    assert ok.returncode == 0, ok.stderr
