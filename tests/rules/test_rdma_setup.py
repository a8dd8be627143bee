"""ipoib-interface-unconfigured on real pastes (tests/fixtures/pastes/SOURCES.md) and on libfabric's
own warning strings (knowledge/messages/libfabric.toml's sources)."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, run_rule, told_facts



def test_fabtests_getinfo_enodata_is_only_a_hint():
    # the thread's answer was an IPoIB interface without an address, but the line alone has other causes
    (f,) = fired("ipoib-interface-unconfigured", recorded_paste_facts("fabtests-802-ipoib-interface-has-no-address.txt"))
    assert f.severity == "info" and "ret=-61 (No data available)" in f.message
    assert "ip -br addr show type ipoib" in f.fix


@pytest.mark.parametrize("line", [
    # libfabric v1.20.0 verbs_info.c:1400 in ofi_log()'s line format
    "libfabric:4117195:1708032872::verbs:fabric:vrb_init_info():1400<warn> no valid IPoIB interfaces found, "
    "FI_EP_MSG endpoint type would not be available\n",
    # libfabric v1.6.0 verbs_info.c:884 in that release's line format
    "libfabric:verbs:core:fi_ibv_get_srcaddr_devs():884<warn> No interface address found\n",
])
def test_the_verbs_providers_warning_is_an_error(line):
    (f,) = fired("ipoib-interface-unconfigured", told_facts(line))
    assert f.severity == "error" and "IPoIB" in f.message and "rdma_cm" in f.message


def test_silent_on_libfabric_cores_enodata_and_other_words():
    # the same errno from libfabric's core and Open MPI's mtl/ofi, not fabtests: no finding
    # a paste records no RDMA ports: the live judgement is skipped with that reason, and nothing fires
    findings, skipped = run_rule("ipoib-interface-unconfigured", recorded_paste_facts("ompi-11412-libfabric-core-getinfo-enodata.txt"))
    assert findings == [] and [s["reason"] for s in skipped] == [
        "needs network.rdma_ports: no RDMA information recorded (/sys/class/infiniband was not recorded)"]


@pytest.mark.parametrize("paste, quoted", [
    ("nvidia-docker-930-container-no-libibverbs-providers.txt", "found for /sys/class/infiniband_verbs/uverbs0"),
    ("rxe-dev-48-librxe-not-installed.txt", "couldn't load driver 'rxe'"),
])
def test_a_device_without_its_provider_is_an_error(paste, quoted):
    (f,) = fired("container-rdma-libs-missing", recorded_paste_facts(paste))
    assert f.severity == "error" and quoted in f.message
    assert "ibverbs-providers" in f.fix and "ibv_devinfo" in f.fix


def test_a_missing_provider_list_alone_is_a_warning():
    # rdma-core dynamic_driver.c:125's string with its default directory, as nvidia-docker#930 shows it
    (f,) = fired("container-rdma-libs-missing", told_facts("libibverbs: Warning: couldn't open config directory '/etc/libibverbs.d'.\n"))
    assert f.severity == "warning" and "/etc/libibverbs.d" in f.message


def test_silent_on_an_unused_provider_that_fails_to_load():
    # ipath.driver left on a RoCE node: its library is absent, the node's device has its own provider
    paste = recorded_paste_facts("nccl-1044-unused-ipath-provider-healthy.txt")
    assert not fired("container-rdma-libs-missing", paste)
    # libibverbs dlopens its providers by name: no program was linked against libipathverbs
    assert not fired("shared-library-not-found", paste)
