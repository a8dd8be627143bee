"""A bare number an emitter printed, decoded from its table and answered by the class it names
(issue 24): rocminfo 1.x's hsa_status_t ("Call returned 4104"), the signal number a launcher reports
("exited on signal 4 (Illegal instruction)") and Linux's kernel-internal errno in HDF5's lock
("errno = 524, error message = 'Unknown error 524'"). Real pastes, each with a near miss."""

from __future__ import annotations

import os
import signal
import sys

import pytest

from rulekit import PASTES, fired, recorded_paste_facts, run_rule
from hpcdoctor.knowledge import messages
from hpcdoctor.triage.messages import find_messages


def _ids(name):
    return {s["id"] for s in find_messages((PASTES / name).read_text(encoding="utf-8"))}


# -- hsa_status_t as rocminfo 1.x printed it -----------------------------------------------------------

def test_rocminfo_4104_in_a_container_is_the_devices_not_passed_in():
    # ROCm/legacy-rocm-build#415: rocminfo 1.8 in the ROCm-docker container, "Call returned 4104"
    paste = "../tickets_blind_o/legacy-rocm-build-415-container-without-device-access.txt"
    assert "hsa:HSA_STATUS_ERROR_OUT_OF_RESOURCES" in _ids(paste)
    (f,) = fired("rocm-kfd-permission-denied", recorded_paste_facts(paste))
    assert f.severity == "warning" and "4104 = 0x1008" in f.message and "Docker container" in f.message
    assert "--device=/dev/kfd --device=/dev/dri" in f.fix and "id -nG" in f.fix


def test_out_of_resources_on_a_gpu_rocm_does_not_support_is_not_the_container():
    # rocm-arch/rocm-arch#901: the same status by name on a laptop RX 560, no container: rocm-gpu-unsupported's
    paste = "../tickets_blind_b/rocm-arch-901-rocminfo-rx560-unsupported.txt"
    assert "hsa:HSA_STATUS_ERROR_OUT_OF_RESOURCES" in _ids(paste)
    findings, _skipped = run_rule("rocm-kfd-permission-denied", recorded_paste_facts(paste))
    assert findings == []


def test_every_hsa_status_number_decodes_to_its_own_entry():
    (fam,) = messages.families(("hsa",))
    for entry in fam.entries:
        line = f"hsa api call failure at line 900, file: rocminfo.cc. Call returned {entry.get('code')}\n"
        assert f"hsa:{entry.key}" in {s["id"] for s in find_messages(line)}, entry.key
    assert fam.by_code[0x1008].key == "HSA_STATUS_ERROR_OUT_OF_RESOURCES"


# -- the signal a launcher reports -------------------------------------------------------------------

@pytest.mark.parametrize("paste, quoted", [
    ("../tickets_blind_o/qmcpack-2096-illegal-instruction-amd-vs-intel.txt", "exited on signal 4 (Illegal instruction)"),
    ("ompi-6200-mpiexec-rank-exited-signal-4-illegal-instruction.txt", "exited on signal 4"),
])
def test_a_rank_killed_by_signal_4_is_a_cpu_lacking_an_instruction(paste, quoted):
    assert "signals:SIGILL" in _ids(paste)
    (f,) = fired("cpu-lacks-required-isa", recorded_paste_facts(paste))
    # the launcher names the signal, not the instruction: the usual cause, at info
    assert f.severity == "info" and quoted in f.message and "/proc/cpuinfo" in f.fix


def test_a_rank_killed_by_another_signal_is_decoded_and_not_the_cpu():
    paste = "fedml-588-mpirun-rank-exited-signal-11-segfault.txt"
    assert "signals:SIGSEGV" in _ids(paste)
    findings, _skipped = run_rule("cpu-lacks-required-isa", recorded_paste_facts(paste))
    assert findings == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the signal numbers and texts are Linux's and glibc's")
def test_every_signal_is_catalogued_with_glibcs_text():
    (fam,) = messages.families(("signals",))
    assert [e.get("code") for e in fam.entries] == list(range(1, 32))
    # Python's own table (3.9 lacks SIGSTKFLT, 16, which 3.11 added): every name it has agrees
    known = {s.value: s.name for s in signal.Signals if 1 <= s.value <= 31}
    assert len(known) >= 30 and all(e.key == known[e.get("code")] for e in fam.entries if e.get("code") in known)
    assert all(e.get("message") == signal.strsignal(e.get("code")) for e in fam.entries)
    # Hydra's and srun's wordings decode the same table
    said = find_messages("YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Illegal instruction (signal 4)\n"
                         "srun: error: nid001: task 3: Bus error (core dumped)\n")
    assert {"signals:SIGILL", "signals:SIGBUS"} <= {s["id"] for s in said}


# -- Linux's kernel-internal errno in HDF5's lock ----------------------------------------------------

@pytest.mark.parametrize("paste, quoted", [
    # E3SM-Project/e3sm_diags#164 (NERSC Edison, the errno alone) and HDFGroup/hdf5#3311 (Cray DVS)
    ("../tickets_blind_o/e3sm-diags-164-hdf5-lock-unsupported.txt", "unable to lock file, errno = 524"),
    ("../tickets_blind_o/hdf5-3311-dvs-flock-unsupported.txt", "unable to lock file, errno = 524"),
])
def test_hdf5_lock_refused_with_524_is_a_file_system_without_flock(paste, quoted):
    gathered = recorded_paste_facts(paste)
    (f,) = fired("fs-file-locking-unsupported", gathered)
    assert f.severity == "error" and "ENOTSUPP" in f.message and "Unknown error 524" in f.message
    assert quoted in f.message and "HDF5_USE_FILE_LOCKING=FALSE" in f.fix and "findmnt" in f.fix
    # one finding for the line: hdf5-file-locking keeps 37, 38 and the lock held (11)
    assert run_rule("hdf5-file-locking", gathered)[0] == []


def test_hdf5_lock_refused_with_enolck_stays_hdf5s_own_rule():
    # h5py/h5py#1082: errno 37 on NFS, answered by hdf5-file-locking, not read again here
    gathered = recorded_paste_facts("h5py-1082-nfs-no-locks-available.txt")
    assert run_rule("fs-file-locking-unsupported", gathered)[0] == []
    assert fired("hdf5-file-locking", gathered)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's text for a number it cannot name")
def test_every_kernel_internal_errno_is_decoded():
    (fam,) = messages.families(("errno",))
    internal = {e.get("code"): e.key for e in fam.entries if e.get("code", 0) >= 512}
    assert sorted(internal) == [n for n in range(512, 532) if n != 520]
    assert all(fam.by_code[n].get("message") == os.strerror(n) for n in internal)
    assert "errno:ENOTSUPP" in {s["id"] for s in find_messages("flock: Unknown error 524\n")}
    assert "errno:ENOTSUPP" in {s["id"] for s in find_messages("OSError: [Errno 524] Unknown error 524\n")}
