"""Set R's classes of issue 24 (r3), each through the real catalogue and the paste path: Grid Engine's
and HTCondor's memory-limit wordings (batch-job-memory-limit-exceeded), the JVM under an address-space
limit (virtual-memory-ulimit-too-low), slurmctld's registration drain reasons (slurm-node-low-realmemory,
slurm-node-registration-invalid), a preload whose mapping is refused (ld-preload-blocked-by-apparmor) and
CUDA error 35 where no GPU is there (cuda-build-on-node-without-gpu, not driver-too-old). Pastes are set
R's and the public ones in tests/fixtures/pastes/SOURCES.md; near misses from the same emitters stay silent."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from hpcdoctor.triage.messages import find_messages
from rulekit import facts, fired, paste_facts, recorded_paste_facts, run_rule


def _told(text):
    """A recorded node with TEXT's catalogued messages as its ticket (a paste that names nothing the
    paste path recognises is refused before any rule runs)."""
    return facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)})


def _r(tmp_path, name):
    return paste_facts(tmp_path, (FIXTURES / "tickets_blind_r" / f"{name}.txt").read_text(encoding="utf-8"))


# -- Grid Engine and HTCondor -------------------------------------------------------------------

def test_grid_engine_abort_mail_names_the_h_vmem_kill(tmp_path):
    (f,) = fired("batch-job-memory-limit-exceeded", _r(tmp_path, "mgatk-36-sge-h-vmem-limit-exceeded"))
    assert f.severity == "error" and "Grid Engine's execd" in f.message and "h_vmem" in f.message
    assert "failed execd enforced h_vmem limit because:" in f.message and "qsub -l h_vmem=" in f.fix


def test_grid_engine_abort_mail_without_a_limit_is_silent():
    # the same mail's format (reaper_execd.c) with failed 100 "assumedly after job": a signal, no limit named;
    # the record as a site's documentation quotes it (find_string "died through signal", 2026-11-27)
    text = (" Max vmem         = 1.965M\nfailed assumedly after job because:\n"
            "job 8974017.1 died through signal KILL (9)\n")
    assert not fired("batch-job-memory-limit-exceeded", _told(text))


# -- the JVM under ulimit -v --------------------------------------------------------------------

def test_metaspace_on_a_login_node_is_a_warning_naming_the_limit_and_a_job(tmp_path):
    (f,) = fired("virtual-memory-ulimit-too-low", _r(tmp_path, "cbio-cluster-183-login-node-ulimit-v-java-heap"))
    assert f.severity == "warning" and "Could not allocate metaspace: 1073741824 bytes" in f.message
    assert "(1024 MiB)" in f.message and "ulimit -v" in f.fix and "qsub -I" in f.fix


def test_metaspace_with_the_limit_shown_is_an_error():
    (f,) = fired("virtual-memory-ulimit-too-low", recorded_paste_facts("haikuports-3549-ulimit-v-metaspace.txt"))
    assert f.severity == "error" and "ulimit -S -v 819400" in f.message and "800 MiB" in f.message


def test_a_jvm_that_started_is_silent():
    # the second half of the same comment: the limit raised, java -version answers
    text = ("$ulimit -S -v unlimited\n$java -version\njava version \"1.8.0_161\"\n"
            "Java(TM) SE Runtime Environment (build 1.8.0_161-b12)\n")
    assert not fired("virtual-memory-ulimit-too-low", _told(text))


# -- Slurm's registration drain reasons ---------------------------------------------------------

def test_low_realmemory_drain_names_slurmd_c_and_resume(tmp_path):
    (f,) = fired("slurm-node-low-realmemory", _r(tmp_path, "citc-terraform-11-slurm-realmemory-above-node-memory"))
    assert f.severity == "error" and "Low RealMemory" in f.message and "RealMemory" in f.message
    assert "ssh compute001 slurmd -C" in f.fix and "scontrol update nodename='compute[001-003]' state=resume" in f.fix


def test_a_gpu_count_below_gres_is_the_other_registration_drain(tmp_path):
    # a node's lines as public cluster notes quote them (find_string "count reported lower than configured", 2026-11-27)
    text = ("State=IDLE+DRAIN+INVALID_REG\n"
            "Reason=gres/gpu count reported lower than configured (0 < 2)\n")
    (f,) = fired("slurm-node-registration-invalid", _told(text))
    assert f.severity == "error" and "(GRES)" in f.message and "slurmd reported 0, slurm.conf declares 2" in f.message
    assert "nvidia-smi -L" in f.fix and "state=resume" in f.fix
    # and the memory drain is the other rule's alone
    assert not fired("slurm-node-registration-invalid", _r(tmp_path, "citc-terraform-11-slurm-realmemory-above-node-memory"))


def test_realmemory_in_a_sentence_is_not_a_drain():
    # a slurm.conf comment quoted in public infrastructure code (find_string "Low RealMemory", 2026-11-27)
    text = ("# m7a.2xlarge: 8 vCPU / 32 GB. RealMemory=31000 MB (slightly below reported\n"
            "# ~31178 MB) prevents INVALID_REG drain from \"Low RealMemory\" check.\n")
    assert not fired("slurm-node-low-realmemory", _told(text))


# -- a preload whose mapping is refused ---------------------------------------------------------

def test_preload_refused_under_apparmor_names_apparmor(tmp_path):
    (f,) = fired("ld-preload-blocked-by-apparmor", _r(tmp_path, "xalt-58-preload-blocked-by-apparmor"))
    assert f.severity == "warning" and "libxalt_init.so" in f.message and "AppArmor, which the paste names" in f.message
    assert "findmnt -no TARGET,OPTIONS --target /N/soft/sles15/xalt/2.10.34/lib64" in f.fix and "apparmor" in f.fix


@pytest.mark.parametrize("paste, quoted", [
    ("firejail-2375-ld-preload-failed-to-map-segment.txt", "/home/damluk/.local/share/spotify/spotifywm.so"),
    ("procs-73-snap-preload-failed-to-map-segment.txt", "libgtk3-nocsd.so.0"),
])
def test_preload_refused_elsewhere_names_both_causes(paste, quoted):
    (f,) = fired("ld-preload-blocked-by-apparmor", recorded_paste_facts(paste))
    assert f.severity == "warning" and quoted in f.message
    assert "security module (AppArmor or SELinux)" in f.message and "noexec" in f.message


def test_a_preload_not_found_is_not_a_refused_mapping():
    assert not fired("ld-preload-blocked-by-apparmor", recorded_paste_facts("ld-preload-open-5-cannot-open-shared-object.txt"))


# -- CUDA error 35 where no GPU is there --------------------------------------------------------

def test_error_35_on_a_cpu_cluster_is_not_an_old_driver(tmp_path):
    gathered = _r(tmp_path, "paddle-14625-cuda-build-on-cpu-cluster")
    assert run_rule("driver-too-old", gathered)[0] == []
    (f,) = fired("cuda-build-on-node-without-gpu", gathered)
    assert f.severity == "warning" and "no NVIDIA driver is installed at all" in f.message and "\"CPU\"" in f.message
    assert "paddlepaddle-gpu" in f.fix and "nvidia-smi" in f.fix


def test_error_35_after_paddles_no_gpu_notice():
    gathered = recorded_paste_facts("paddle-12237-gpu-build-no-gpu-found-error-35.txt")
    assert run_rule("driver-too-old", gathered)[0] == []
    (f,) = fired("cuda-build-on-node-without-gpu", gathered)
    assert "Compiled with WITH_GPU, but no GPU found in runtime" in f.message


def test_error_35_with_nothing_said_of_the_gpu_stays_an_old_driver(tmp_path):
    gathered = _r(tmp_path, "cupy-9252-driver-older-than-cuda-runtime")
    assert not fired("cuda-build-on-node-without-gpu", gathered)
    assert [x.symbol for x in run_rule("driver-too-old", gathered)[0]] == ["driver-too-old"]


def test_the_probe_reads_rlimit_as_of_a_process_started_under_a_limit():
    # a real child process whose soft RLIMIT_AS is set before it starts (as a login node's ulimit -v is)
    import json
    import resource
    import subprocess
    import sys

    from hpcdoctor.checks.limits import _address_space

    limit = 3 * 1024 ** 3
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]

    def lowered():
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))

    code = "import json; from hpcdoctor.checks.limits import _rlimit_as; print(json.dumps(_rlimit_as()))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         preexec_fn=lowered, check=True).stdout
    rec = _address_space(json.loads(out))
    assert rec["soft"] == limit and rec["hard"] == (None if hard == resource.RLIM_INFINITY else hard)
    assert _address_space({"soft": "4G"}).__class__.__name__ == "Unknown"
