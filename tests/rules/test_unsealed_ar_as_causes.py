"""Causes and non-causes the pastes of sets AR and AS (unsealed 2026-11-29) show in their emitters'
own words, each read from the real paste; where a variant is needed, the real paste is edited in
memory and the edit is said."""

from __future__ import annotations

from conftest import FIXTURES, run_main
from hpcdoctor.triage.messages import find_messages
from rulekit import fired, message_ids, read_paste, run_rule, ticket_file_facts

AR = FIXTURES / "tickets_blind_ar"
AS = FIXTURES / "tickets_blind_as"

MANYLINUX_2010 = AR / "manylinux-389-pip-9-predates-manylinux2010-tag.txt"
MANYLINUX_2_35 = AR / "lab2d-30-manylinux-2-35-wheel-on-ubuntu-18-glibc.txt"
CHIP_SEQ = AR / "chip-seq-pipeline2-162-conda-solve-killed-on-login-node.txt"
SHARPY = AR / "sharpy-268-conda-solve-killed-vm-ram.txt"


# --- a shell's "Killed" behind conda's unfinished spinner ----------------------------------------

def test_a_scripts_killed_command_behind_condas_spinner_is_read_and_answered(tmp_path):
    assert "signals:SIGKILL" in message_ids(read_paste(CHIP_SEQ))
    (f,) = fired("host-memory-oom-killed", ticket_file_facts(tmp_path, CHIP_SEQ))
    assert f.severity == "info" and "SIGKILL" in f.message and "journalctl -k" in f.fix
    # the kill came during conda's solve: the fix says where to solve with memory
    assert "conda solved" in f.message and "srun --mem=" in f.fix


def test_an_interactive_shells_killed_behind_condas_spinner_is_read(tmp_path):
    assert "signals:SIGKILL" in message_ids(read_paste(SHARPY))
    assert fired("host-memory-oom-killed", ticket_file_facts(tmp_path, SHARPY))


def test_killed_after_other_words_than_condas_spinner_is_not_the_shells():
    # edited: the spinner's message replaced by a sentence that ends in "Killed"
    text = read_paste(SHARPY).replace("Solving environment: \\ Killed", "and then the job was Killed")
    assert "signals:SIGKILL" not in message_ids(text)


def test_a_refusal_neither_paste_gets_any_more(tmp_path):
    for path in (CHIP_SEQ, SHARPY):
        assert run_main("check", "--from", str(path)).returncode == 0


# --- a wheel's platform tag: pip too old, or glibc too old ----------------------------------------

def test_pip_9_refuses_a_manylinux2010_wheel_for_its_own_age(tmp_path):
    (f,) = fired("pip-too-old-for-wheel-tag", ticket_file_facts(tmp_path, MANYLINUX_2010))
    assert "pip 9.0.1" in f.message and "19.0" in f.message
    # the system's pip (dist-packages): the upgrade goes to the user's site, with the pip of that Python
    assert "python3.6 -m pip install --user --upgrade 'pip>=19.0'" in f.fix


def test_a_pip_new_enough_for_the_tag_is_not_blamed(tmp_path):
    # edited: pip 19.0.3 shown instead of 9.0.1
    text = read_paste(MANYLINUX_2010).replace("pip 9.0.1 from", "pip 19.0.3 from")
    assert not fired("pip-too-old-for-wheel-tag", ticket_file_facts(tmp_path, MANYLINUX_2010, text))


def test_a_wheel_for_another_python_is_refused_for_that_first(tmp_path):
    # edited: the wheel is for CPython 3.7, the pip shown runs Python 3.6
    text = read_paste(MANYLINUX_2010).replace("cp36-cp36", "cp37-cp37m")
    assert run_rule("pip-too-old-for-wheel-tag", ticket_file_facts(tmp_path, MANYLINUX_2010, text))[0] == []


def test_a_python_whose_last_pip_predates_the_tag_is_told_to_change_python(tmp_path):
    # edited: Python 3.4 (its last pip is 19.1.1) and a manylinux2014 wheel for it
    text = (read_paste(MANYLINUX_2010).replace("(python 3.6)", "(python 3.4)")
            .replace("cp36-cp36-manylinux2010", "cp34-cp34m-manylinux2014"))
    (f,) = fired("pip-too-old-for-wheel-tag", ticket_file_facts(tmp_path, MANYLINUX_2010, text))
    assert "19.1.1" in f.fix and "newer Python" in f.fix and "--upgrade 'pip" not in f.fix
    assert "install --user PyMuPDF " in f.fix and ".whl" not in f.fix.splitlines()[-1]   # the cp34 wheel fits no 3.11


def test_a_manylinux_2_35_wheel_on_ubuntu_18_04_is_the_glibc(tmp_path):
    g = ticket_file_facts(tmp_path, MANYLINUX_2_35)
    (f,) = fired("glibc-older-than-binary", g)
    assert "2.35" in f.message and "2.27" in f.message and "Ubuntu 18.04" in f.message
    assert "python:3.10-bookworm" in f.fix   # the wheel's Python, on Debian 12's glibc 2.36
    assert run_rule("pip-too-old-for-wheel-tag", g)[0] == []


def test_the_same_wheel_on_a_release_with_a_new_enough_glibc_is_not_the_glibc(tmp_path):
    # edited: Ubuntu 22.04 (glibc 2.35) named instead of 18.04
    text = read_paste(MANYLINUX_2_35).replace("ubuntu 18.04", "ubuntu 22.04")
    assert run_rule("glibc-older-than-binary", ticket_file_facts(tmp_path, MANYLINUX_2_35, text))[0] == []


def test_a_release_named_is_read_with_its_number():
    said = [s for s in find_messages("CentOS Linux release 7.9.2009 (Core)") if s["id"] == "prose_os:linux-release-said"]
    assert said and said[0]["distro"] == "CentOS" and said[0]["release"] == "7.9"
    assert not [s for s in find_messages("Ubuntu 20.04 or 22.04") if s["id"] == "prose_os:linux-release-said"]


# --- an srun step refused inside its job is the job's own request --------------------------------

def test_a_step_that_asks_more_than_its_job_is_not_the_partitions_nodes(tmp_path):
    path = AR / "openscow-1157-web-job-step-more-processors-than-permitted-healthy.txt"
    assert run_rule("slurm-request-exceeds-node", ticket_file_facts(tmp_path, path))[0] == []
    # edited: the same refusal for a job allocation, not a step
    text = read_paste(path).replace("srun: error: Unable to create step for job 65: More processors requested than permitted",
                                "srun: error: Unable to allocate resources: More processors requested than permitted")
    assert fired("slurm-request-exceeds-node", ticket_file_facts(tmp_path, path, text))


# --- messages that name their cause, read where they are -----------------------------------------

def test_ollamas_no_avx_warning_is_the_cpus_instruction_sets(tmp_path):
    (f,) = fired("cpu-lacks-required-isa", ticket_file_facts(tmp_path, AR / "ollama-2825-no-avx-disables-gpu.txt"))
    assert "AVX" in f.message and f.severity == "error"


def test_an_old_nvcc_header_wrapped_at_a_space_is_read(tmp_path):
    path = AR / "pyrit-307-nvcc-4-rejects-gcc-4-5.txt"
    (f,) = fired("nvcc-host-gcc-unsupported", ticket_file_facts(tmp_path, path))
    # CUDA 4-6.5's nvcc has no -allow-unsupported-compiler (CUDA 11's): the fix names an older gcc
    assert "4.5" in f.message and "g++-4.4" in f.fix and "allow-unsupported" not in f.fix


def test_horovods_nccl_check_and_bitsandbytes_cpu_line_are_read_not_refused():
    assert "nccl:ncclUnhandledCudaError" in message_ids(read_paste(AS / "horovod-108-nccl-built-for-cuda9-on-cuda8.txt"))
    bnb = AR / "bitsandbytes-191-libsbitsandbytes-cpu-typo-healthy.txt"
    assert "frameworks:bnb-torch-sees-no-cuda" in message_ids(read_paste(bnb))
    assert run_main("check", "--from", str(bnb)).returncode == 0


def test_bitsandbytes_cpu_fallback_line_is_not_a_missing_cuda_binary(tmp_path):
    bnb = AR / "bitsandbytes-191-libsbitsandbytes-cpu-typo-healthy.txt"
    assert run_rule("bitsandbytes-cuda-binary-missing", ticket_file_facts(tmp_path, bnb))[0] == []


# --- a Find module CMake ships from a later release ----------------------------------------------

RTK = AR / "rtk-449-cmake-3-14-older-than-findcudatoolkit.txt"


def test_cmake_3_14_has_no_findcudatoolkit(tmp_path):
    (f,) = fired("cmake-older-than-required", ticket_file_facts(tmp_path, RTK))
    assert "3.14.3" in f.message and "3.17" in f.message and f.severity == "error"
    assert "'cmake>=3.17'" in f.fix


def test_a_cmake_that_has_the_module_is_not_blamed(tmp_path):
    # edited: CMake 3.18.4 named instead of 3.14.3 (the reporter's "from CMake v3.17" stays)
    text = read_paste(RTK).replace("CMake v3.14.3", "CMake v3.18.4")
    assert not fired("cmake-older-than-required", ticket_file_facts(tmp_path, RTK, text))


def test_a_packages_own_config_missing_is_not_cmakes_age(tmp_path):
    # edited: a package CMake ships no Find module for (Qt5)
    text = read_paste(RTK).replace('provided by "CUDAToolkit"', 'provided by "Qt5"')
    assert run_rule("cmake-older-than-required", ticket_file_facts(tmp_path, RTK, text))[0] == []


def test_without_the_running_cmake_only_the_module_line_is_certain(tmp_path):
    # edited: the CMake versions named removed; the config-file line alone leaves CONFIG mode open
    text = read_paste(RTK).replace("using CMake v3.14.3", "using CMake").replace("from CMake v3.17", "from CMake")
    (f,) = fired("cmake-older-than-required", ticket_file_facts(tmp_path, RTK, text))
    assert f.severity == "info" and "CONFIG mode" in f.message
    moduled = text + ('\n  By not providing "FindCUDAToolkit.cmake" in CMAKE_MODULE_PATH this project has asked CMake '
                      'to find a package configuration file provided by "CUDAToolkit", but CMake did not find one.\n')
    (f,) = fired("cmake-older-than-required", ticket_file_facts(tmp_path, RTK, moduled))
    assert f.severity == "error"   # edited: CMake's module-mode sentence added, as CMake prints it


# --- amdgpu's firmware file missing ---------------------------------------------------------------

NAVI22 = AS / "drm-kmod-firmware-27-navi22-firmware-missing-from-source-build.txt"


def test_freebsds_missing_navi22_firmware_with_the_gpu_init_failing(tmp_path):
    (f,) = fired("amdgpu-firmware-missing", ticket_file_facts(tmp_path, NAVI22))
    assert f.severity == "error" and "navy_flounder_sos.bin" in f.message and "pkg search" in f.fix


def test_linuxs_loader_line_names_the_file_and_the_package_lookup(tmp_path):
    # edited: the FreeBSD line replaced by Linux's firmware loader's, the init failure dropped
    text = read_paste(NAVI22).replace("drmn0: could not load firmware image 'amdgpu/navy_flounder_sos.bin'",
                                  "amdgpu 0000:03:00.0: Direct firmware load for amdgpu/navy_flounder_sos.bin failed with error -2")
    text = "\n".join(line for line in text.splitlines() if "sw_init of IP block" not in line)
    (f,) = fired("amdgpu-firmware-missing", ticket_file_facts(tmp_path, NAVI22, text))
    assert f.severity == "info" and "/lib/firmware/amdgpu/" in f.fix and "apt-file search" in f.fix


def test_an_optional_trusted_application_file_alone_is_only_a_hint(tmp_path):
    # set AS's healthy control: vega20_ta.bin absent, ROCm's maintainers say it is not needed
    path = AS / "legacy-rocm-build-912-vega20-ta-firmware-not-needed-healthy.txt"
    (f,) = fired("amdgpu-firmware-missing", ticket_file_facts(tmp_path, path))
    assert f.severity == "info" and "trusted-application" in f.message


def test_another_drivers_firmware_is_not_amdgpus(tmp_path):
    # edited: a wireless card's firmware image named in place of amdgpu's
    text = read_paste(NAVI22).replace("could not load firmware image 'amdgpu/navy_flounder_sos.bin'",
                                  "could not load firmware image 'iwm7265Dfw'")
    assert not fired("amdgpu-firmware-missing", ticket_file_facts(tmp_path, NAVI22, text))


# --- EMFILE's text quoted by the user -------------------------------------------------------------

def test_the_unix_message_quoted_is_the_open_files_limit(tmp_path):
    path = AS / "cigale-67-too-many-open-files-shm-segments.txt"
    (f,) = fired("open-files-limit-too-low", ticket_file_facts(tmp_path, path))
    assert "ulimit -n" in f.fix
    # edited: the system-wide limit's text (ENFILE) quoted instead
    text = read_paste(path).replace('"Too many open files"', '"Too many open files in system"')
    assert not fired("open-files-limit-too-low", ticket_file_facts(tmp_path, path, text))


def test_a_kill_outside_condas_solve_does_not_speak_of_conda(tmp_path):
    # edited: conda's spinner removed from the killed line, so the shell's report stands alone
    text = read_paste(CHIP_SEQ).replace("Solving environment: | chip-seq", "chip-seq")
    (f,) = fired("host-memory-oom-killed", ticket_file_facts(tmp_path, CHIP_SEQ, text))
    assert "conda solved" not in f.message and "srun --mem=" not in f.fix
