"""slurm-invalid-account and slurm-request-exceeds-node on what a real Slurm 22.05.8 printed
(tests/fixtures/pastes/slurm-22.05-requests-beyond-the-node.txt) and on set H's public tickets
(unsealed after its final sealed score); silent on a GPU request, on a #SBATCH variable alone and on
a job that only waits its turn."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulekit import fired, paste_facts, recorded_paste_facts, told_facts
from hpcdoctor import pipeline
from hpcdoctor.runner import Options
from hpcdoctor.triage.paste import open_paste

SET_H = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_h"
RECORDED = "slurm-22.05-requests-beyond-the-node.txt"


def _set_h(name):
    with open_paste([str(SET_H / name)]) as (root, _r, _n):
        return pipeline.gather(root, Options())


def test_the_recorded_refusals_name_the_memory_line_and_the_partition():
    facts = recorded_paste_facts(RECORDED)
    (fit,) = fired("slurm-request-exceeds-node", facts)
    assert "Memory specification can not be satisfied" in fit.message and "CoreSpecCount" in fit.fix
    (access,) = fired("slurm-invalid-account", facts)
    assert 'partition "nosuch"' in access.message


def test_a_variable_in_an_account_directive_is_named_and_the_job_name_one_is_not():
    (f,) = fired("slurm-invalid-account", recorded_paste_facts(RECORDED))
    # the recording's job script holds --job-name=$USER-test and --account=$proj: only the account matters here
    assert "--account from $proj" in f.message and "$USER" not in f.message.split("line 7")[-1]
    assert f.fix.splitlines()[0].startswith('sbatch --account="$proj" job.sh')


@pytest.mark.parametrize("name", ["arjunausers-112-node-config-not-available-reserved-cores.txt",
                                  "aws-parallelcluster-282-more-nodes-than-exist.txt"])
def test_node_configuration_not_available_without_a_gpu_request(name):
    (f,) = fired("slurm-request-exceeds-node", _set_h(name))
    assert "Requested node configuration is not available" in f.message
    assert not fired("slurm-gpu-request-rejected", _set_h(name))


@pytest.mark.parametrize("name", ["seml-42-partition-not-allowed-for-user.txt",
                                  "picongpu-2931-sbatch-account-variable-not-expanded.txt"])
def test_invalid_account_or_partition_combination(name):
    (f,) = fired("slurm-invalid-account", _set_h(name))
    assert "Invalid account or account/partition combination specified" in f.message


def test_a_gpu_request_refused_stays_slurm_gpu_request_rejecteds():
    facts = recorded_paste_facts("slurm-22.05-grestypes-gpu-node-without-gpus.txt")
    assert fired("slurm-gpu-request-rejected", facts)
    assert not fired("slurm-request-exceeds-node", facts)


def test_pending_for_partition_config_is_a_request_too_large(tmp_path):
    text = ("$ squeue\n             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"
            "                 2     debug     wrap     root PD       0:00     10 (PartitionConfig)\n")
    (f,) = fired("slurm-request-exceeds-node", paste_facts(tmp_path, text))
    assert "PartitionConfig" in f.message


def test_silent_on_a_variable_directive_alone_and_on_a_job_waiting_its_turn(tmp_path):
    text = ("#!/bin/bash\n#SBATCH --account=$proj\n#SBATCH -n 1\nsrun hostname\n$ squeue\n"
            "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"
            "                 8     debug     wrap     root PD       0:00      1 (Priority)\n"
            "                 9     debug     wrap     root PD       0:00      1 (Resources)\n")
    facts = paste_facts(tmp_path, text)
    assert not fired("slurm-invalid-account", facts)
    assert not fired("slurm-request-exceeds-node", facts)


@pytest.mark.parametrize("name", ["nvidia-container-toolkit-202-driver-rpc-timeout.txt",
                                  "nvidia-docker-1447-cgroup-devices-not-found.txt"])
def test_dockers_gpus_all_is_not_a_slurm_gpu_request(name):
    from rulekit import PASTES
    from hpcdoctor.triage.messages import find_messages

    text = (PASTES / name).read_text()
    assert "--gpus all" in text
    assert not [s for s in find_messages(text) if s["id"] == "prose:slurm-gpus-requested"]


def test_a_job_that_names_no_partition_where_the_cluster_has_no_default():
    # canu's own sbatch line, no --partition, refused by a cluster without a Default=YES partition
    (f,) = fired("slurm-invalid-account", recorded_paste_facts("canu-597-no-partition-no-default.txt"))
    assert f.severity == "error"
    assert "names no partition and the cluster has no default one" in f.message and "(line 10:" in f.message
    assert f.fix.startswith("sinfo -s") and "sbatch --partition=NAME job.sh" in f.fix


def test_a_site_filter_refusing_the_partition_names_it_and_the_ones_allowed():
    # set U (unsealed, issue 24): TOGA's Nextflow sbatch at a site whose job_submit filter lists the account's partitions
    facts = recorded_paste_facts("../tickets_blind_u/toga-9-partition-missing-and-node-count-required.txt")
    (f,) = fired("slurm-invalid-account", facts)
    assert f.severity == "error" and 'partition "batch"' in f.message
    assert "gpu-build,nocona,matador,quanah" in f.message and "sinfo -s" in f.fix
    (g,) = fired("slurm-submit-filter-rejected", facts)   # the same line, read as the site's filter refusing the job
    # both submissions' reasons are quoted: the partition, then (after the user fixed it) the node count
    assert "'batch' is not a valid partition" in g.message and "Number of nodes must be specified" in g.message
    # the second submission: the site's "Number of nodes must be specified" just above Slurm's "Node count
    # specification invalid" is the reason; the request is not larger than a node
    assert not fired("slurm-request-exceeds-node", facts)


def test_a_partition_word_in_code_is_not_a_refusal():
    # a shell helper's own log line (the same words, no sbatch/salloc/srun prefix): not a Slurm submission
    assert not fired("slurm-invalid-account", told_facts('LOGE "\\"$PARTITION\\" is not a valid partition name"\n'))


def test_a_site_filter_that_returns_the_node_count_code_after_its_own_words_is_the_filters():
    # toga-9's second submission alone (set U, unsealed): the site's line just above Slurm's code is the reason
    text = ("  sbatch: error: Number of nodes must be specified: [-N, --nodes=<num>]\n"
            "  sbatch: error: Batch job submission failed: Node count specification invalid\n")
    (g,) = fired("slurm-submit-filter-rejected", told_facts(text))
    assert "Number of nodes must be specified" in g.message and "Node count specification invalid" in g.message
    assert not fired("slurm-request-exceeds-node", told_facts(text))


def test_slurms_node_count_code_without_site_words_is_not_a_filters():
    text = "sbatch: error: Batch job submission failed: Node count specification invalid\n"
    assert not fired("slurm-submit-filter-rejected", told_facts(text))
    assert fired("slurm-request-exceeds-node", told_facts(text))
