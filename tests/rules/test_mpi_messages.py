"""The rules of rules/mpi_messages.py and rules/mpi_slots.py on verbatim cuts of public threads (tests/fixtures/pastes,
SOURCES.md there): Open MPI's, Slurm's and UCX's own lines about the launch and the node, and
silence where a paste says only that a rank died."""

from __future__ import annotations

from rulekit import PASTES, facts, fired, paste_facts, recorded_paste_facts, with_env
from hpcdoctor.triage.messages import find_messages

MPI_RULES = ("mpi-not-enough-slots", "mpi-srun-without-pmi", "mpi-memlock-limit")


def test_not_enough_slots_from_open_mpis_help_text():
    (f,) = fired("mpi-not-enough-slots", recorded_paste_facts("grudge-227-openmpi-not-enough-slots-ci.txt"))
    assert "line 2" in f.message and "slots" in f.message
    assert f.fix.startswith("mpirun --display-allocation -np 1 hostname")
    assert "--oversubscribe" in f.fix and "small machine" in f.fix


def test_not_enough_slots_under_slurm_counts_tasks():
    text = (PASTES / "grudge-227-openmpi-not-enough-slots-ci.txt").read_text()
    g = with_env("h100-kvm-1gpu", {"SLURM_JOB_ID": "7", "SLURM_NTASKS": "1"}, **{"ticket.symptoms": find_messages(text)})
    (f,) = fired("mpi-not-enough-slots", g)
    assert "--ntasks" in f.fix and "--oversubscribe" not in f.fix


def test_open_mpi_direct_launched_without_pmi():
    (f,) = fired("mpi-srun-without-pmi", recorded_paste_facts("ompi-10940-srun-direct-launch-without-pmi.txt"))
    assert "Open MPI was started by srun" in f.message and "line 4" in f.message
    assert f.fix.splitlines()[0].startswith("srun --mpi=list") and "ompi_info" in f.fix


def test_slurm_without_the_pmix_plugin():
    (f,) = fired("mpi-srun-without-pmi", recorded_paste_facts("geos-chem-822-srun-mpi-pmix-plugin-missing.txt"))
    assert "mpi/pmix" in f.message and "built without it" in f.message and "line 2" in f.message
    assert f.fix.startswith("srun --mpi=list")


def test_pmix_plugin_that_cannot_load_its_library_is_the_installation():
    (f,) = fired("mpi-srun-without-pmi", recorded_paste_facts("executorlib-761-slurm-pmix-cannot-load-library.txt"))
    assert "cannot load the PMIx library" in f.message and "line 7" in f.message
    assert "administrators" in f.fix


def test_ucx_memlock_limit_names_the_current_limit():
    (f,) = fired("mpi-memlock-limit", recorded_paste_facts("ucx-8684-ibv-create-cq-memlock-64kb.txt"))
    assert "64 kB" in f.message and "line 3" in f.message
    assert "memlock" in f.fix


def test_a_rank_killed_by_signal_9_alone_names_no_cause():
    for paste in ("ompi-2661-mpirun-rank-killed-signal9.txt", "jukebox-155-hydra-bad-termination-signal9.txt"):
        g = recorded_paste_facts(paste)
        ids = {s["id"] for s in g["facts"]["ticket"]["symptoms"]}
        assert ids & {"openmpi:orterun:proc-aborted", "mpich:terminated-exit-string"}, ids
        for symbol in MPI_RULES + ("host-memory-oom-killed",):
            assert not fired(symbol, g), (paste, symbol)


def test_signal_and_rank_are_read_from_the_launchers_lines():
    g = recorded_paste_facts("ompi-2661-mpirun-rank-killed-signal9.txt")
    (s,) = [s for s in g["facts"]["ticket"]["symptoms"] if s["id"] == "openmpi:orterun:proc-aborted"]
    assert (s["rank"], s["signal"], s["signame"], s["node"]) == ("0", "9", "Killed", "host01")
    g = recorded_paste_facts("jukebox-155-hydra-bad-termination-signal9.txt")
    by_id = {s["id"]: s for s in g["facts"]["ticket"]["symptoms"]}
    assert by_id["mpich:terminated-exit-string"]["signal"] == "9"
    assert by_id["mpich:bad-termination"]["exitcode"] == "9"


# open-mpi/ompi v5.0.10 ompi/runtime/help-mpi-runtime.txt [no-pmix-but], the topic as show_help prints it
OMPI5_NO_PMIX_BUT = """--------------------------------------------------------------------------
No PMIx server was reachable, but a PMI1/2 was detected.
If srun is being used to launch application,  %d singletons will be started.
--------------------------------------------------------------------------
"""


def test_open_mpi_5_under_srun_with_pmi2_only():
    g = with_env("h100-kvm-1gpu", {}, **{"ticket.symptoms": find_messages(OMPI5_NO_PMIX_BUT)})
    (f,) = fired("mpi-srun-without-pmi", g)
    assert "Open MPI was started by srun" in f.message and "line 2" in f.message
    assert "srun --mpi=pmix" in f.fix


# https://github.com/openucx/ucx/issues/1956 (description): a UCX error that is not about memory
UCX_1956 = ("[1509144464.195199] [clx-orion-053:1869 :0]    ib_mlx5_log.c:109  UCX  ERROR Error on QP 0x16d83 wqe[134]: "
            "Local QP operation (synd 0x2 vend 0x68) opcode SEND\n")


def test_each_rule_is_silent_without_its_own_line():
    killed = recorded_paste_facts("ompi-2661-mpirun-rank-killed-signal9.txt")
    assert not fired("mpi-not-enough-slots", killed)
    assert not fired("mpi-srun-without-pmi", killed)
    assert not fired("mpi-memlock-limit", killed)
    # srun's plugin listing alone (the head of the executorlib paste) is a working Slurm
    listing = (PASTES / "executorlib-761-slurm-pmix-cannot-load-library.txt").read_text().split("srun: error:")[0]
    assert not fired("mpi-srun-without-pmi", with_env("h100-kvm-1gpu", {}, **{"ticket.symptoms": find_messages(listing)}))
    # a UCX error about a queue pair, not the locked-memory limit
    ucx = with_env("h100-kvm-1gpu", {}, **{"ticket.symptoms": find_messages(UCX_1956)})
    assert [s["id"] for s in ucx["facts"]["ticket"]["symptoms"]] == ["ucx:log-line"]
    assert not fired("mpi-memlock-limit", ucx)


def test_binding_overload_names_the_counts():
    (f,) = fired("mpi-binding-overload", recorded_paste_facts("baselines-325-openmpi-binding-overload-4-cores.txt"))
    assert "2 processes for 1 CPU(s)" in f.message and "line 3" in f.message
    assert f.fix.startswith("lscpu") and "--use-hwthread-cpus" in f.fix


def test_binding_overload_with_no_cpus_is_a_mapping_problem_not_too_many_ranks():
    assert not fired("mpi-binding-overload", recorded_paste_facts("prrte-671-binding-overload-zero-cpus.txt"))


def test_open_mpis_other_slot_shortages_are_the_same_refusal():
    # the topics as show_help prints them (open-mpi/ompi v4.1.8 help-orte-rmaps-base.txt and
    # help-orte-rmaps-rr.txt, openpmix/prrte v3.0.13 help-prte-rmaps-base.txt and help-prte-rmaps-rr.txt)
    for text in ("The requested number of processes exceeds the allocated\nnumber of slots:\n\n  #slots:       4\n  #processes:   8\n",
                 "There are not enough slots on the nodes in your allocation to satisfy your request to launch on a 8 "
                 "process-per-node basis - only 4 slots/node were available.\n",
                 "All nodes which are allocated for this job are already filled.\n",
                 "Either there are not enough slots available in the system to launch\nthe 8 processes that were "
                 "requested by the application, or there are\nnot enough CPUs to bind them as requested:\n",
                 "There are not enough slots available in the system or not enough\nCPUs in the specified PE-LIST "
                 "to map the number of processes requested\nby the application:\n"):
        (f,) = fired("mpi-not-enough-slots", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
        assert "more ranks than the slots it has" in f.message


# MPICH's own PMI-1/PMI-2 client (MPICH 4.1 on, src/pmi/src/pmi_v2.c) started by a launcher that serves
# only PMIx (PMIU_detect_pmix_launcher: PMIX_VERSION, PMIX_RANK or PRTE_LAUNCHED set).
def test_mpich_pmi2_client_under_a_pmix_launcher(tmp_path):
    # no public paste recorded: pmi_v2.c's text with the "[unset]: " prefix PMIU_printf prints
    g = paste_facts(tmp_path, "[unset]: launcher not compatible with PMI2 client\n")
    (f,) = fired("mpi-srun-without-pmi", g)
    assert "MPICH's PMI-2 client" in f.message and "only PMIx" in f.message
    assert "srun --mpi=pmi2 -n 2 hostname" in f.fix and "srun has no usable MPI plugin" not in f.message
    assert not fired("mpi-init-outside-launcher", g)


def test_the_same_words_without_the_pmi_client_prefix_are_not_mpichs():
    found = find_messages("the docs say this launcher not compatible with PMI2 client setups\n")
    assert not [s for s in found if s["id"] == "mpich:simple-pmi-launcher-not-compatible"]
    assert find_messages("[unset]: launcher not compatible with PMI2 client\n")[0]["id"] == "mpich:simple-pmi-launcher-not-compatible"


def test_open_mpi_4s_own_pmi_component_failing_is_read_not_left_unlisted():
    # flux-framework/flux-core#3064 (hppritcha's comment): Open MPI v4.0's flux component's OPAL_PMI_ERROR line
    found = find_messages("[nid00105:45578] PMI_Init [pmix_flux.c:387:flux_init]: Operation failed\n")
    assert [s for s in found if s["id"] == "openmpi:opal-pmi-call-failed"][0]["error"] == "Operation failed"
    assert not [s for s in find_messages("PMI_Init [mycode.c:12:main]: Operation failed\n")
                if s["id"] == "openmpi:opal-pmi-call-failed"]
