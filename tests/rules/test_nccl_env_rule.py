"""ENV014 nccl-env-not-read on a recorded H100 node (torch 2.11.0+cu130, NCCL 2.28.9, its environment
from a CUDA image: NCCL_VERSION=2.28.3-1), with the variables each case adds."""

from __future__ import annotations

from rulekit import facts, fired, run_rule, with_env

from hpcdoctor.knowledge import nccl_env

H100 = "h100-kvm-1gpu"


def test_the_recorded_environment_is_quiet():
    # NCCL_VERSION is set by NVIDIA's CUDA images to say what they carry: no release reads it, and
    # it is no typo either.
    g = facts(H100)
    assert g["facts"]["env"]["vars"]["NCCL_VERSION"] == "2.28.3-1"
    assert not fired("nccl-env-not-read", g)


def test_a_timeout_myth_gets_the_real_control():
    (f,) = fired("nccl-env-not-read", with_env(H100, {"NCCL_TIMEOUT": "7200"}))
    assert f.subject == "NCCL_TIMEOUT" and f.severity == "advice"
    assert "read by no NCCL release" in f.message and "init_process_group" in f.message
    assert "timeout=datetime.timedelta(seconds=7200)" in f.fix and f.fix_lang == "python"


def test_a_typo_names_the_variable_it_meant():
    (f,) = fired("nccl-env-not-read", with_env(H100, {"NCCL_SOCKET_IFNAMES": "ib0"}))
    assert "did you mean NCCL_SOCKET_IFNAME?" in f.message
    assert f.env == {"NCCL_SOCKET_IFNAME": "ib0"}
    (t,) = fired("nccl-env-not-read", with_env(H100, {"TORCH_NCCL_BLOCKING_WAITS": "1"}))
    assert t.env == {"TORCH_NCCL_BLOCKING_WAIT": "1"}


def test_real_and_location_variables_are_left_alone():
    env = {"NCCL_SOCKET_IFNAME": "ib0", "NCCL_IB_TIMEOUT": "22", "TORCH_NCCL_BLOCKING_WAIT": "1",
           "NCCL_BLOCKING_WAIT": "1", "NCCL_HOME": "/opt/nccl", "NCCL_ROOT": "/opt/nccl", "NCCL_INCLUDE_DIR": "/x"}
    assert not fired("nccl-env-not-read", with_env(H100, env))


def test_a_variable_newer_than_the_jobs_nccl():
    job = "2.28.9"
    later = next(e for n in nccl_env.names("nccl") for e in nccl_env.entries(n)
                 if e["reader"] == "nccl" and nccl_env.reads(e, job) is False and nccl_env.before_first(e, job)
                 and n.startswith("NCCL_") and len(nccl_env.entries(n)) == 1)
    (f,) = fired("nccl-env-not-read", with_env(H100, {later["name"]: "1"}))
    assert f"read from NCCL {later['first']} on; this job's NCCL {job} does not read it" in f.message
    # The same variable with an NCCL that reads it: nothing to say.
    assert not fired("nccl-env-not-read", with_env(H100, {later["name"]: "1"}, **{"torch.nccl": later["first"]}))


def test_a_variable_the_jobs_nccl_no_longer_reads():
    dropped = next(e for n in nccl_env.names("nccl") for e in nccl_env.entries(n)
                   if e.get("last") and len(nccl_env.entries(n)) == 1 and not nccl_env.before_first(e, "2.28.9"))
    (f,) = fired("nccl-env-not-read", with_env(H100, {dropped["name"]: "1"}))
    assert f"was last read by NCCL {dropped['last']}" in f.message


def test_a_torch_name_dropped_with_its_new_name_is_not_called_renamed():
    # ENABLE_NCCL_HEALTH_CHECK became TORCH_ENABLE_NCCL_HEALTH_CHECK, and torch then dropped both:
    # telling a torch 2.11 job to set the new name would be advice nothing reads.
    old = nccl_env.entries("ENABLE_NCCL_HEALTH_CHECK")[0]
    assert old["renamed_to"] == "TORCH_ENABLE_NCCL_HEALTH_CHECK"
    (f,) = fired("nccl-env-not-read", with_env(H100, {"ENABLE_NCCL_HEALTH_CHECK": "1"}))
    assert "was last read by torch" in f.message and "TORCH_ENABLE_NCCL_HEALTH_CHECK" not in f.fix
    # Under torch 2.0, which reads it, nothing.
    assert not fired("nccl-env-not-read", with_env(H100, {"ENABLE_NCCL_HEALTH_CHECK": "1"}, **{"torch.version": "2.0.1"}))


def test_unknown_releases_are_not_judged():
    # An NCCL newer than the table: it may read a name the table lacks.
    assert not fired("nccl-env-not-read", with_env(H100, {"NCCL_TIMEOUT": "7200"}, **{"torch.nccl": "2.99.1"}))
    # No NCCL version known: a version-bound judgement cannot be made, a name nothing reads still is.
    later = next(e for n in nccl_env.names("nccl") for e in nccl_env.entries(n) if nccl_env.before_first(e, "2.28.9")
                 and len(nccl_env.entries(n)) == 1)
    g = with_env(H100, {later["name"]: "1", "NCCL_TIMEOUT": "7200"})
    del g["facts"]["torch"]["nccl"]
    assert [f.subject for f in fired("nccl-env-not-read", g)] == ["NCCL_TIMEOUT"]


def test_rccl_names_are_not_judged_on_rocm():
    assert not fired("nccl-env-not-read", with_env(H100, {"NCCL_TIMEOUT": "7200"}, **{"torch.hip": "6.2.41133"}))


def test_no_environment_means_skipped_not_passed():
    g = facts(H100)
    g["facts"]["env"]["vars"] = None
    findings, skipped = run_rule("nccl-env-not-read", g)
    assert not findings and [s["code"] for s in skipped] == ["ENV014"]


def test_names_others_own_and_plugin_variables_are_not_judged_by_the_nccl_release():
    # CUDA_LAUNCH_BLOCKING is NCCL-read only from 2.17, SLURM_JOB_ID by a plugin: CUDA and Slurm own them.
    old_nccl = {"torch.nccl": "2.12.12"}
    assert nccl_env.before_first(nccl_env.entries("CUDA_LAUNCH_BLOCKING")[0], "2.12.12")
    assert not fired("nccl-env-not-read", with_env(H100, {"CUDA_LAUNCH_BLOCKING": "1", "SLURM_JOB_ID": "7"}, **old_nccl))
    # A profiler plugin is its own library: NCCL's release does not say whether it reads the variable.
    plugin = next(e for n in nccl_env.names("nccl") for e in nccl_env.entries(n)
                  if nccl_env.from_plugin(e) and n.startswith("NCCL_") and nccl_env.before_first(e, "2.12.12"))
    assert not fired("nccl-env-not-read", with_env(H100, {plugin["name"]: "1"}, **old_nccl))


def test_an_outside_plugin_is_named_beside_an_unknown_variable():
    (f,) = fired("nccl-env-not-read", with_env(H100, {"NCCL_OFI_SOMETHING": "1", "NCCL_NET_PLUGIN": "aws-ofi"}))
    assert "unless the plugin the job loads reads it: NCCL_NET_PLUGIN=aws-ofi" in f.message
