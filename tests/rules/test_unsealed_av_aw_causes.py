"""Causes and non-causes the pastes of sets AV and AW (unsealed 2026-11-29) show in their emitters'
own words (or, where the paste was cut before the error, the user's), each read from the real
paste; where a variant is needed, the real paste is edited in memory and the edit is said."""

from __future__ import annotations

from conftest import FIXTURES, run_main
from hpcdoctor.triage.messages import find_messages
from rulekit import fired, message_ids, read_paste, run_rule, ticket_file_facts

AV = FIXTURES / "tickets_blind_av"
AW = FIXTURES / "tickets_blind_aw"

CL_EXE = AV / "pydrr-6-msvc-host-compiler-not-on-path.txt"
DISK_SPACE = AV / "datasets-2591-cache-fills-disk.txt"
EMFILE_TITLE = AV / "pytorch-11201-shared-tensor-file-handles-exhausted.txt"
PIP_LEGACY = AV / "apex-214-wrong-cuda-on-path-multiple-versions.txt"
LD_OBJECT = AV / "gpt-neox-554-original-megatron-fused-kernels-healthy.txt"
XLA_VARIABLE = AV / "keras-20308-variable-on-other-device-xla-healthy.txt"
DMLC_CHECK = AV / "mxnet-1691-cudnn-conv-no-grad-req-add-healthy.txt"
PBS_RESOURCE = AW / "juicer-162-pbs-scripts-request-amd-resource.txt"
SGE_BAD_ALLOC = AW / "tigrlab-admin-303-sge-job-bad-alloc-memory-limits.txt"
VMA_HUGEPAGES = AW / "libvma-1054-not-enough-hugepages-regular-memory-fallback.txt"
TURBO = AW / "tlp-179-intel-pstate-turbo-unavailable-healthy.txt"


# --- nvcc's host compiler not on PATH -----------------------------------------------------------

def test_nvcc_without_cl_exe_on_path_is_answered_with_visual_studios_developer_prompt(tmp_path):
    (f,) = fired("compile-toolchain-missing", ticket_file_facts(tmp_path, CL_EXE))
    assert "Cannot find compiler 'cl.exe' in PATH" in f.message and "nvcc" in f.message
    assert "where cl.exe" in f.fix and "vswhere.exe" in f.fix and "vcvars64.bat" in f.fix
    assert "module avail gcc" not in f.fix   # a Windows prompt has no modules


def test_nvcc_without_gpp_gets_the_compiler_module_fix(tmp_path):
    # edited: nvcc names g++ instead of cl.exe (its format string, "Cannot find compiler '%s' in PATH", takes any name)
    text = read_paste(CL_EXE).replace("'cl.exe'", "'g++'")
    (f,) = fired("compile-toolchain-missing", ticket_file_facts(tmp_path, CL_EXE, text))
    assert "g++" in f.message and "module avail gcc" in f.fix and "vcvars64" not in f.fix


# --- a disk said full, the program's error cut from the paste --------------------------------

def test_a_users_disk_space_is_full_is_quoted_back_by_disk_full(tmp_path):
    (f,) = fired("disk-full", ticket_file_facts(tmp_path, DISK_SPACE))
    assert f.severity == "info" and "my disk space is full" in f.message
    assert "HF_HOME=" in f.fix   # the datasets cache under $HOME moves with it


def test_a_hedged_disk_space_sentence_is_no_report(tmp_path):
    # edited: the statement turned into a question of whether it is full
    text = read_paste(DISK_SPACE).replace("(and now my disk space is full)", "(I wonder if my disk space is full)")
    findings, _ = run_rule("disk-full", ticket_file_facts(tmp_path, DISK_SPACE, text))
    assert not findings


# --- "Too many open files" in the user's words, beside DataLoader workers ---------------------

def test_too_many_open_files_in_a_title_beside_dataloader_workers_is_the_dataloaders_limit(tmp_path):
    ids = message_ids(read_paste(EMFILE_TITLE))
    assert {"prose:too-many-open-files-said", "prose:dataloader-workers-said"} <= ids
    (f,) = fired("dataloader-open-files", ticket_file_facts(tmp_path, EMFILE_TITLE))
    assert f.severity == "info" and "line 1" in f.message
    assert "set_sharing_strategy('file_system')" in f.fix and 'ulimit -n "$(ulimit -Hn)"' in f.fix


def test_too_many_open_files_without_dataloader_workers_is_not_the_dataloaders(tmp_path):
    # edited: no worker processes (num_workers=0, and the sentence about num_workers > 0 removed)
    text = (read_paste(EMFILE_TITLE).replace("num_workers=1", "num_workers=0")
            .replace("With num_workers > 0 the workers", "The workers"))
    assert "prose:dataloader-workers-said" not in message_ids(text)
    findings, _ = run_rule("dataloader-open-files", ticket_file_facts(tmp_path, EMFILE_TITLE, text))
    assert not findings


def test_a_programs_own_emfile_line_is_not_read_as_the_users_words():
    assert "prose:too-many-open-files-said" not in message_ids("OSError: [Errno 24] Too many open files\n")
    assert "prose:too-many-open-files-said" not in message_ids("accept: Too many open files in system\n")


# --- lines read instead of refused ------------------------------------------------------------

def test_pips_legacy_failure_without_its_command_word_is_read_not_refused():
    assert "pip:legacy-command-failed-with-error-code" in message_ids(read_paste(PIP_LEGACY))
    assert run_main("check", "--from", str(PIP_LEGACY)).returncode != 2


def test_the_legacy_pip_form_without_command_needs_pips_own_folder():
    line = '"python setup.py install" failed with error code 1 in /home/me/build/pkg\n'
    assert "pip:legacy-command-failed-with-error-code" not in message_ids(line)


def test_gnu_lds_unreadable_object_is_read_with_bfds_reason():
    (s,) = [m for m in find_messages(read_paste(LD_OBJECT)) if m["id"] == "linker:ld-file-not-recognized"]
    assert s["file"] == "megatron/fused_kernels/scaled_upper_triang_masked_softmax.o" and s["line"] == 1
    text = "/usr/bin/ld: build/a.o: file not recognized: file truncated\n"
    (t,) = [m for m in find_messages(text) if m["id"] == "linker:ld-file-not-recognized"]
    assert t["error"] == "file truncated"


def test_xlas_variable_on_another_device_is_the_programs_placement(tmp_path):
    (s,) = [m for m in find_messages(read_paste(XLA_VARIABLE)) if m["id"] == "tensorflow:xla-variable-on-other-device"]
    assert s["located"].endswith("device:GPU:0") and s["from"].endswith("device:CPU:0")
    result = run_main("check", "--from", str(XLA_VARIABLE))
    assert result.returncode == 0 and "xla-variable-on-other-device" in result.stdout


def test_a_dmlc_check_failure_is_quoted_back_with_its_emitter():
    (s,) = [m for m in find_messages(read_paste(DMLC_CHECK)) if m.get("form") == "dmlc-check-failed"]
    assert s["file"] == "src/operator/./cudnn_convolution-inl.h"
    assert s["message"].startswith("Check failed: (req[conv::kWeight]) == (kWriteTo)")
    assert run_main("check", "--from", str(DMLC_CHECK)).returncode == 0


def test_libvmas_hugepage_fallback_and_intel_pstates_turbo_notice_are_read_and_stay_silent():
    assert "hugepages:libvma-hugepages-fallback" in message_ids(read_paste(VMA_HUGEPAGES))
    assert "kernel_cpufreq:intel-pstate-turbo-unavailable" in message_ids(read_paste(TURBO))
    for path in (VMA_HUGEPAGES, TURBO):
        result = run_main("check", "--from", str(path))
        assert result.returncode == 0 and "no findings in what the paste shows" in result.stdout


# --- OpenPBS naming a resource it does not define ---------------------------------------------

def test_qsub_naming_an_unknown_resource_is_the_job_templates(tmp_path):
    (f,) = fired("pbs-resource-unknown", ticket_file_facts(tmp_path, PBS_RESOURCE))
    assert "named AMD" in f.message
    assert "grep -n -w -- AMD job.sh" in f.fix and "pbsnodes -av" in f.fix


def test_pbss_bare_unknown_resource_names_nothing_to_remove(tmp_path):
    # edited: the server's text without the resource's name (PBSE_UNKRESC as pbs_errors.toml reads it)
    text = read_paste(PBS_RESOURCE).replace("Unknown resource: AMD", "Unknown resource")
    assert not fired("pbs-resource-unknown", ticket_file_facts(tmp_path, PBS_RESOURCE, text))


# --- std::bad_alloc in a Grid Engine job ------------------------------------------------------

def test_bad_alloc_in_a_grid_engine_job_is_its_h_vmem_address_space_limit(tmp_path):
    facts = ticket_file_facts(tmp_path, SGE_BAD_ALLOC)
    (f,) = fired("virtual-memory-ulimit-too-low", facts)
    assert "std::bad_alloc" in f.message and "h_vmem" in f.message and "line 7" in f.message
    assert "qsub -l h_vmem=" in f.fix and "qconf -sc" in f.fix
    findings, _ = run_rule("host-memory-insufficient", facts)
    assert not findings   # the address-space limit answers; the node's RAM is not in question


def test_bad_alloc_without_grid_engines_requests_stays_the_generic_memory_warning(tmp_path):
    # edited: the sentence naming -l mem_free removed
    text = read_paste(SGE_BAD_ALLOC).replace(
        "And I think that I specify more than enough RAM for the command using -l mem_free.", "")
    facts = ticket_file_facts(tmp_path, SGE_BAD_ALLOC, text)
    assert not fired("virtual-memory-ulimit-too-low", facts)
    (f,) = fired("host-memory-insufficient", facts)
    assert f.severity == "warning" and "line 5" in f.message and "ulimit -v" in f.fix
