"""no-outbound-network on the download clients' own output: recorded on a VM whose resolver answers
for no outside name (tests/fixtures/pastes/offline-vm-*.txt, SOURCES.md there), and on public threads."""

from __future__ import annotations

import pytest

from rulekit import PASTES, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


@pytest.mark.parametrize("paste, words", [
    ("offline-vm-curl.txt", "could not resolve huggingface.co"),
    ("offline-vm-git-clone.txt", "could not resolve github.com"),
    ("offline-vm-wget.txt", "could not resolve download.pytorch.org"),
    ("offline-vm-requests-get.txt", "could not resolve download.pytorch.org"),
    ("offline-vm-pip-install.txt", "could not resolve its server's name"),
    ("offline-vm-torch-hub.txt", "could not resolve its server's name"),
    ("offline-vm-hf-hub-download.txt", "could not resolve huggingface.co"),   # the Hub's retry warning, line 1
    ("offline-vm-transformers-autoconfig.txt", "could not resolve huggingface.co"),
])
def test_every_recorded_client_is_read(paste, words):
    (f,) = fired("no-outbound-network", recorded_paste_facts(paste))
    assert words in f.message and "login nodes" in f.message


def test_the_fix_fills_what_the_paste_names():
    (f,) = fired("no-outbound-network", recorded_paste_facts("offline-vm-torch-hub.txt"))
    assert "load_state_dict_from_url('https://download.pytorch.org/models/resnet50-0676ba61.pth')" in f.fix
    assert "URL" not in f.fix and "export TORCH_HOME=" in f.fix
    (f,) = fired("no-outbound-network", recorded_paste_facts("offline-vm-git-clone.txt"))
    assert "git clone https://github.com/pytorch/vision.git/" in f.fix
    # pip asked PyTorch's CUDA index: the same build needs the same index, named though its host is not printed
    (f,) = fired("no-outbound-network", recorded_paste_facts("offline-vm-pip-install.txt"))
    assert "python -m pip install torch" in f.fix and "/whl/cu121" in f.fix and "PACKAGE" not in f.fix


@pytest.mark.parametrize("paste, model", [
    ("hpcfund-12-hub-unreachable-cluster-network.txt", "facebook/esm2_t33_650M_UR50D"),   # transformers 4.x
    ("edin-mls-3-compute-node-errno-101-hub.txt", "zai-org/GLM-ASR-Nano-2512"),           # the Hub's retry warning
])
def test_hub_downloads_on_a_cluster_are_fetched_on_the_login_node_then_run_offline(paste, model):
    (f,) = fired("no-outbound-network", recorded_paste_facts(paste))
    assert "huggingface.co" in f.message
    assert f"snapshot_download('{model}')" in f.fix and "HF_HUB_OFFLINE=1" in f.fix and "MODEL_ID" not in f.fix


def test_a_model_that_cannot_be_named_keeps_a_named_placeholder():
    # the recording's last line alone: huggingface_hub's error names neither the server nor the model
    last = (PASTES / "offline-vm-hf-hub-download.txt").read_text().splitlines()[-1]
    (f,) = _fires(find_messages(last + "\n"))
    assert "could not reach its server" in f.message
    assert "MODEL_ID: the model the job loads" in f.fix
    # what cannot be completed is a comment; what is printed to run runs: a DNS check and the offline switch
    assert f.fix.startswith("getent hosts huggingface.co")
    assert "\n# HF_HOME=$HOME/hf python -c" in f.fix and "\nexport HF_HOME=$HOME/hf HF_HUB_OFFLINE=1" in f.fix


def test_the_clusters_own_names_and_transient_errors_are_not_this_rule():
    text = (PASTES / "offline-vm-curl.txt").read_text()
    found = find_messages(text.replace("huggingface.co", "node017"))          # a bare node name
    assert found and not _fires(found)
    found = find_messages(text.replace("huggingface.co", "10.1.2.3"))         # a private address
    assert not _fires(found)
    edin = (PASTES / "edin-mls-3-compute-node-errno-101-hub.txt").read_text()
    assert _fires(find_messages(edin))
    assert not _fires(find_messages(edin.replace("[Errno 101] Network is unreachable", "[Errno 104] Connection reset by peer")))


def test_silent_on_a_paste_without_a_download():
    assert not fired("no-outbound-network", recorded_paste_facts("motiongpt3-14-numpy1-module-on-numpy-2.3.txt"))


def _fires(symptoms):
    from rulekit import facts
    return fired("no-outbound-network", facts("h100-kvm-1gpu", **{"ticket.symptoms": symptoms}))


def test_pip_retries_that_end_in_an_install_were_a_passing_outage():
    text = (PASTES / "offline-vm-pip-install.txt").read_text()
    assert _fires(find_messages(text))
    # the same retries, then pip's own success line (its words as pip 23.2.1 prints them, recorded here)
    assert not _fires(find_messages(text + "Successfully installed six-1.17.0\n"))


@pytest.mark.parametrize("paste, host", [
    ("../tickets_blind_t/radical-entk-359-compute-node-no-internet.txt", "service.iris.edu"),
    ("wormbase-website-3602-lwp-bad-hostname.txt", "www.wormbase.org"),
])
def test_perls_bad_hostname_is_a_failed_lookup(paste, host):
    # IO::Socket::INET's "Bad hostname" under LWP (netclient.toml): the name did not resolve
    (f,) = fired("no-outbound-network", recorded_paste_facts(paste))
    assert f.severity == "error" and f"could not resolve {host}" in f.message and f"getent hosts {host}" in f.fix


# apt's resolver (issue 24 audit; real paste, SOURCES.md)
def test_apts_temporary_failure_resolving_is_a_name_that_does_not_resolve():
    (f,) = fired("no-outbound-network", recorded_paste_facts("apt-vscode-191340-temporary-failure-resolving.txt"))
    assert "could not resolve archive.ubuntu.com" in f.message and "getent hosts archive.ubuntu.com" in f.fix


def test_apts_release_file_dated_ahead_is_not_the_network():
    assert not fired("no-outbound-network", recorded_paste_facts("apt-chilipie-190-release-not-valid-yet.txt"))
