"""core-dump-size-limited on real journals from public threads (fixtures/pastes, SOURCES.md): a core over
systemd-coredump's ExternalSizeMax (trunk-recorder), a process with RLIMIT_CORE 0 (webwork2), and a
segfault whose core went where the kernel sent it, which says nothing about a limit."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts


def test_a_core_over_the_configured_maximum_names_coredump_conf():
    (f,) = fired("core-dump-size-limited", recorded_paste_facts("trunk-recorder-583-coredump-external-size-max.txt"))
    assert f.severity == "warning" and "ExternalSizeMax" in f.message and "(4.1 GiB over 2.0 GiB)" in f.message
    assert "ExternalSizeMax=32G" in f.fix and "systemd-analyze cat-config systemd/coredump.conf" in f.fix


def test_resource_limits_name_ulimit_c():
    (f,) = fired("core-dump-size-limited", recorded_paste_facts("webwork2-1531-coredump-resource-limits-disable.txt"))
    assert f.severity == "warning" and "RLIMIT_CORE 0" in f.message and "(/usr/sbin/httpd)" in f.message
    assert "ulimit -c unlimited" in f.fix and "LimitCORE=infinity" in f.fix


def test_silent_on_a_segfault_alone():
    assert not fired("core-dump-size-limited", recorded_paste_facts("mpitutorial-95-openmpi-process-received-signal.txt"))
