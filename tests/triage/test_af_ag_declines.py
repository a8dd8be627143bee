"""Sets AF's and AG's healthy controls that were declined as unreadable: Go's address errors, Hugging
Face datasets' worker warning, icpc's named internal error and pip's download log are each read (a
catalogued message) and answered with no error or warning."""

from __future__ import annotations

import pytest

from conftest import alarms, report_of
from hpcdoctor.triage.messages import find_messages
from rulekit import PASTES


@pytest.mark.parametrize("name,symptom", [
    ("docs-cn-1830-master-addr-without-port-healthy.txt", "go_net:missing-port"),
    ("ms-swift-4061-streaming-dataset-one-shard-workers-healthy.txt", "hf_datasets:too-many-dataloader-workers"),
    ("portage-17-icpc-18-internal-error-bad-pointer-healthy.txt", "compiler_ice:icc-internal-error-named"),
    ("pytorch-35828-pip-find-links-picks-cu92-wheel-healthy.txt", "pip_download:downloading-wheel"),
])
def test_healthy_pastes_are_read_and_stay_quiet(name, symptom):
    doc = report_of("check", "--from", str(PASTES / name))
    assert symptom in str(doc)
    assert alarms(PASTES / name) == {}


def test_the_intel_internal_error_is_told_as_intels():
    doc = report_of("check", "--from", str(PASTES / "portage-17-icpc-18-internal-error-bad-pointer-healthy.txt"))
    (f,) = [f for f in doc["findings"] if f["symbol"] == "compiler-internal-error"]
    assert f["severity"] == "info" and f["message"].startswith("the Intel compiler")


@pytest.mark.parametrize("text,symptom", [
    # golang/go src/net/ipsock.go and net.go's formats filled in
    ("listen tcp: address fe80::1:8080: too many colons in address", "go_net:too-many-colons"),
    ("dial tcp: address [::1:80: missing ']' in address", "go_net:bracket-errors"),
    # datasets' earlier wording (n_shards)
    ("Too many dataloader workers: 8 (max is dataset.n_shards=2). Stopping 6 dataloader workers.",
     "hf_datasets:too-many-dataloader-workers"),
])
def test_other_wordings_are_read_and_feed_no_rule(text, symptom):
    found = [s for s in find_messages(text) if s["id"] == symptom]
    assert found and found[0]["rules"] == []


def test_prose_about_an_internal_error_is_not_the_compilers_line():
    assert not [s for s in find_messages("we hit an internal error: bad pointer in our code\n")
                if s["id"] == "compiler_ice:icc-internal-error-named"]


def test_the_wheel_pip_fetched_is_read_with_its_local_tag():
    # https://github.com/pytorch/pytorch/issues/35828: the URL-encoded '+' of torch's CUDA tag
    (s,) = [s for s in find_messages((PASTES / "pytorch-35828-pip-find-links-picks-cu92-wheel-healthy.txt").read_text())
            if s["id"] == "pip_download:downloading-wheel"]
    assert (s["project"], s["version"], s["local"]) == ("torch", "1.2.0", "cu92")
    assert s["tags"] == "cp27-cp27mu-manylinux1_x86_64"
    # a cached wheel without a local tag (pip's "Using cached"), and an sdist, which is no wheel
    (c,) = [s for s in find_messages("  Using cached numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.whl (18.3 MB)\n")
            if s["id"] == "pip_download:downloading-wheel"]
    assert (c["project"], c["version"], c.get("local")) == ("numpy", "1.26.4", None)
    assert not [s for s in find_messages("  Downloading numpy-1.26.4.tar.gz (15.8 MB)\n") if s["id"] == "pip_download:downloading-wheel"]
