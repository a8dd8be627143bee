"""The Linux kernel's own lines about a node's health (knowledge/messages/kernel_*.toml and oom.toml's
kernel lines), read from real public pastes of dmesg and journalctl: each is read as its entry with
what it names, the few that state a rule's fact fire it, and a healthy log holding similar words
reads as nothing."""

from __future__ import annotations

from rulekit import PASTES, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


def _read(name):
    return find_messages((PASTES / name).read_text(encoding="utf-8"))


def _ids(found):
    return [s["id"] for s in found]


def test_a_soft_lockup_names_the_cpu_and_the_task_and_fires_nothing():
    found = _read("deepspeed-925-soft-lockup-pytest.txt")
    (s,) = [s for s in found if s["id"] == "kernel_hung:soft-lockup"]
    assert (s["cpu"], s["seconds"], s["comm"], s["pid"]) == ("7", "23", "pytest", "25222")
    assert s["action"] == "inspect" and s["rules"] == []
    g = recorded_paste_facts("deepspeed-925-soft-lockup-pytest.txt")
    assert not fired("host-memory-oom-killed", g) and not fired("cpu-lacks-required-isa", g)


def test_a_hung_task_in_a_syslog_is_read_with_its_task_and_timeout():
    found = _read("openzfs-1804-nfsd-hung-task.txt")
    (s,) = [s for s in found if s["id"] == "kernel_hung:hung-task-blocked"]
    assert (s["comm"], s["pid"], s["seconds"]) == ("nfsd", "3108", "120")
    assert "kernel_hung:hung-task-disable-hint" in _ids(found)


def test_older_kernels_oom_kill_lines_fire_the_oom_rule():
    g = recorded_paste_facts("platform-resource-manager-42-oom-kill-process-old.txt")
    ids = {s["id"] for s in g["facts"]["ticket"]["symptoms"]}
    assert {"oom:kernel-oom-kill-process-old", "oom:kernel-oom-killed-process-old"} <= ids
    # the 6.1 wording's entry must not read the older line twice
    assert "oom:kernel-oom-killed-process" not in ids
    (f,) = fired("host-memory-oom-killed", g)
    # the kernel's own line is quoted, not the grep command above it that holds the same words
    assert "kernel killed a process because memory ran out" in f.message and "Kill process 89746 (python)" in f.message
    assert "grep" not in f.message


def test_the_oom_reaper_line_states_a_kill():
    g = recorded_paste_facts("openbmc-1887-oom-reaper-old-killed-process.txt")
    ids = {s["id"] for s in g["facts"]["ticket"]["symptoms"]}
    assert "oom:oom-reaper-reaped" in ids
    (f,) = fired("host-memory-oom-killed", g)
    assert "Killed process 935 (python)" in f.message


def test_an_old_kill_line_naming_a_compiler_is_a_builds_kill():
    # the same pre-5.0 line with a compiler as its victim (format of the pastes above, values filled in)
    text = "[ 4018.450000] Killed process 4242 (cc1plus) total-vm:9113656kB, anon-rss:8102104kB, file-rss:0kB, shmem-rss:0kB\n"
    (s,) = [s for s in find_messages(text) if s["family"] == "oom"]
    assert s["id"] == "oom:kernel-oom-killed-process-old" and s["comm"] == "cc1plus"


def test_the_kernels_invalid_opcode_trap_is_a_sigill_hint():
    g = recorded_paste_facts("abrt-1219-trap-invalid-opcode-journal.txt")
    (s,) = [s for s in g["facts"]["ticket"]["symptoms"] if s["id"] == "kernel_fault:trap-invalid-opcode"]
    assert (s["comm"], s["pid"], s["frame"]) == ("chrome", "2979", "chrome")
    (f,) = fired("cpu-lacks-required-isa", g)
    assert f.severity == "info" and "SIGILL in chrome" in f.message


def test_other_traps_and_prose_about_opcodes_are_not_sigill():
    # Linux 6.1.192's show_signal format for a division by zero, filled in: SIGFPE, not SIGILL
    trap = "traps: python[4242] trap divide error ip:7f1c9d2e3a10 sp:7ffc2b3d4e50 error:0 in libfoo.so[7f1c9d200000+200000]\n"
    assert _ids([s for s in find_messages(trap) if s["family"] == "kernel_fault"]) == ["kernel_fault:trap-divide-error"]
    prose = "the JIT emitted an invalid opcode trap, I think, not sure where\n"
    assert not [s for s in find_messages(prose) if s["family"] == "kernel_fault"]


def test_an_ext4_disk_failure_is_read_line_by_line():
    ids = _ids(_read("lede-6147-ext4-remount-read-only.txt"))
    for sid in ("kernel_storage:blk-critical-target", "kernel_storage:jbd2-aborting-journal",
                "kernel_storage:ext4-error", "kernel_storage:ext4-remount-read-only",
                "kernel_storage:buffer-io-error", "kernel_storage:ext4-io-error-writing-superblock"):
        assert sid in ids, sid
    # each one states the disk or its file system failing: all feed storage-device-errors (rules/storage_devices.py),
    # and the remount and the aborted journal also filesystem-remounted-read-only (rules/read_only_fs.py)
    read = [s for s in _read("lede-6147-ext4-remount-read-only.txt") if s["family"] == "kernel_storage"]
    assert all("storage-device-errors" in s["rules"] for s in read)
    assert {s["id"] for s in read if "filesystem-remounted-read-only" in s["rules"]} >= {"kernel_storage:ext4-remount-read-only"}


def test_an_nfs_server_not_responding_names_the_server():
    (s,) = [s for s in _read("princeton-ansible-6612-nfs-not-responding.txt")
            if s["id"] == "kernel_storage:rpc-server-not-responding"]
    assert (s["program"], s["server"], s["state"]) == ("nfs", "td-mf-cl2.princeton.edu", "still trying")


def test_a_machine_check_is_read_but_no_dram_finding_is_made_of_it():
    found = _read("mcelog-70-machine-check-events-logged.txt")
    ids = _ids(found)
    assert "kernel_hwerr:mce-events-logged" in ids
    (rec,) = [s for s in found if s["id"] == "kernel_hwerr:mce-record"]
    assert (rec["cpu"], rec["bank"], rec["status"]) == ("0", "4", "a600000000020408")
    # "mce: CPU supports 7 MCE banks" is a boot notice, not an error
    assert len([s for s in found if s["family"] == "kernel_hwerr"]) == 2
    assert not fired("host-dram-ecc-errors", recorded_paste_facts("mcelog-70-machine-check-events-logged.txt"))


def test_aer_in_the_newer_wording_is_one_correctable_finding():
    found = [s for s in _read("pop-3363-aer-correctable-gpu-port.txt") if s["family"] == "kernel_hwerr"]
    assert _ids(found) == ["kernel_hwerr:aer-correctable"]
    assert found[0]["action"] == "inspect" and found[0]["cause"] == "hardware"


def test_a_healthy_nfs_client_boot_reads_as_no_kernel_fault():
    found = _read("nfs-ganesha-656-nfs-client-boot-healthy.txt")
    assert [s for s in found if str(s["id"]).startswith(("kernel_", "oom:"))] == []


def test_words_about_the_oom_killer_are_not_its_lines():
    prose = ("Our admin says the OOM killer enabled on this node killed process 12 earlier, "
             "and that a kernel panic may follow; memory: usage was high\n")
    assert not [s for s in find_messages(prose) if s["family"] in ("oom", "kernel_fault", "kernel_hung")]


def test_an_intel_iommu_fault_names_the_device_and_the_reason():
    found = _read("dasharo-641-dmar-fault-igpu.txt")
    (s,) = [s for s in found if s["id"] == "kernel_hwerr:dmar-fault"]
    assert (s["type"], s["device"], s["reason"]) == ("DMA Read", "00:02.0", "Present bit in root entry is clear")
    assert "kernel_hwerr:dmar-drhd-fault" in _ids(found)


def test_an_xfs_shutdown_in_the_pre_5_15_wording_is_read():
    (s,) = [s for s in _read("stratisd-812-xfs-shutdown-pre-5.15.txt") if s["id"] == "kernel_storage:xfs-shutdown"]
    assert (s["device"], s["why"], s["action"]) == ("dm-11", "Corruption of in-memory data", "drain")


def test_amd_vi_events_broken_after_the_bracket_are_each_read_once():
    found = [s for s in _read("pcengines-apu2-240-amd-vi-wrapped-events.txt") if s["family"] == "kernel_hwerr"]
    assert sorted(_ids(found)) == ["kernel_hwerr:INVALID_DEVICE_REQUEST", "kernel_hwerr:IO_PAGE_FAULT"]


def _loud(g):
    """The findings at error or warning of every rule over a paste's facts: a line that states no rule's
    fact must leave them empty."""
    from hpcdoctor import engine
    from hpcdoctor.facts import FactView

    rules, errors = engine.load_rules()
    assert not errors
    findings, _ = engine.evaluate(rules, FactView(g["facts"], g["unknown"], None))
    return [f for f in findings if f.severity in ("error", "warning")]


def test_a_lustre_clients_undeliverable_rpc_and_failed_ping_are_read_with_what_they_name():
    name = "jade-hpc-gpu-14-lustre-client-network-error.txt"
    found = _read(name)
    (s,) = [s for s in found if s["id"] == "kernel_lustre:request-failed-network-error"]
    assert (s["opc"], s["import"]) == ("250", "MGC172.31.126.87@o2ib@172.31.126.87@o2ib")
    (op,) = [s for s in found if s["id"] == "kernel_lustre:operation-failed"]
    assert (op["operation"], op["nid"], op["rc"]) == ("obd_ping", "172.31.126.88@o2ib", "-107")
    # the "Skipped N previous similar messages" lines of the same function are no second failure
    assert len([s for s in found if s["family"] == "kernel_lustre"]) == 2
    assert _loud(recorded_paste_facts(name)) == []


def test_an_nfs4_clientid_in_use_and_its_failed_state_manager_are_read_and_fire_nothing():
    name = "tigrlab-admin-234-nfs4-clientid-in-use.txt"
    found = _read(name)
    (c,) = [s for s in found if s["id"] == "kernel_nfs:clientid-in-use"]
    assert c["server"] == "tigrsrv"
    (m,) = [s for s in found if s["id"] == "kernel_nfs:state-manager-failed"]
    assert (m["section"], m["server"], m["errno"]) == ("lease expired", "tigrsrv", "1")
    assert _loud(recorded_paste_facts(name)) == []


def test_a_beegfs_clients_refused_setting_is_read_with_its_name_and_fires_nothing():
    name = "beegfs-89-client-config-argument-invalid.txt"
    found = _read(name)
    (s,) = [s for s in found if s["id"] == "beegfs_client:config-argument-invalid"]
    assert s["argument"] == "connClientPort"
    assert "beegfs_client:common-objects-init-failed" in _ids(found)
    assert _loud(recorded_paste_facts(name)) == []
