"""Causes and non-causes the pastes of sets BF and BG (unsealed 2026-11-30) show in their emitters' own
words, each read from the real paste; where a variant is needed, the real paste is edited in memory and the
edit is said."""

from __future__ import annotations

from conftest import FIXTURES
from hpcdoctor.triage.messages import find_messages
from rulekit import fired, read_paste, run_rule, ticket_file_facts

BF = FIXTURES / "tickets_blind_bf"
BG = FIXTURES / "tickets_blind_bg"

SSH_REFUSED = BF / "nccl-tests-299-mpirun-ssh-refused-on-worker.txt"
UV_FLOCK = BG / "uv-9050-home-fs-flock-disabled.txt"
LFORTRAN = BG / "lfortran-6976-modfile-from-older-lfortran-build.txt"
TF_NVCC = BG / "nvidia-docker-740-ubuntu-nvcc-9-1-in-cuda-9-2-image.txt"
SPLIT_CUDA = BG / "nabladft-11-libtorch-cuda-cpp-not-found.txt"
NINJA = BG / "pytorch-encoding-167-ninja-not-installed.txt"
TORCHAUDIO = BG / "autocut-106-torchaudio-built-for-other-cuda-than-torch.txt"
OPENMP_R = BG / "citrus-122-apple-clang-unsupported-fopenmp.txt"
OPENMP_SPADE = BG / "spade-137-apple-clang-unsupported-fopenmp.txt"
SITE_PACKAGES = BG / "universe-67-pip-system-site-packages-not-writable.txt"
CUDA_OLD = BG / "torch7-787-distro-cuda-5-5-older-than-required-6-5.txt"


def _ids(text: str) -> set:
    return {s["id"] for s in find_messages(text)}


# --- ssh between nodes ----------------------------------------------------------------------------

def test_ssh_refused_to_a_redacted_host_is_read_and_answered_with_starting_sshd(tmp_path):
    # the user replaced the worker's address with "(worker_ip)" before pasting
    (f,) = fired("ssh-between-nodes-refused", ticket_file_facts(tmp_path, SSH_REFUSED))
    assert "(worker_ip)" in f.message and "no ssh server answered" in f.message
    assert "sshd -D" in f.fix and "authorized_keys" not in f.fix   # no sshd listens: keys are not yet the matter


def test_ssh_refused_for_keys_still_gets_the_key_advice(tmp_path):
    # edited: the same launch refused at login instead of at connect
    text = read_paste(SSH_REFUSED).replace("ssh: connect to host (worker_ip) port 22: Connection refused",
                                           "root@worker-1: Permission denied (publickey).")
    (f,) = fired("ssh-between-nodes-refused", ticket_file_facts(tmp_path, SSH_REFUSED, text))
    assert "authorized_keys" in f.fix and "sshd -D" not in f.fix


# --- file locks -----------------------------------------------------------------------------------

def test_uvs_lock_refused_with_enosys_is_a_file_system_without_flock(tmp_path):
    (f,) = fired("fs-file-locking-unsupported", ticket_file_facts(tmp_path, UV_FLOCK))
    assert f.severity == "error" and "uv" in f.message and "ENOSYS" in f.message
    assert "UV_CACHE_DIR" in f.fix and "UV_PYTHON_INSTALL_DIR" in f.fix


def test_uv_waiting_for_a_lock_another_process_holds_is_not_read():
    # edited: a lock held elsewhere only makes uv wait; EAGAIN is not a file system without locks
    text = read_paste(UV_FLOCK).replace("Function not implemented (os error 38)", "Resource temporarily unavailable (os error 11)")
    assert "file_locks:uv-lock-refused" not in _ids(text)


# --- Fortran modules ------------------------------------------------------------------------------

def test_lfortran_reading_a_modfile_of_an_earlier_build_names_both_versions(tmp_path):
    (f,) = fired("fortran-module-compiler-mismatch", ticket_file_facts(tmp_path, LFORTRAN))
    assert "0.48.0-7-g4ef9b6a31-dirty" in f.message and "0.51.0-77-gf4a3246b4-dirty" in f.message
    assert "*.mod" in f.fix and "netcdf" not in f.fix


def test_lfortrans_modfile_format_not_recognised_is_not_a_version_mismatch():
    # edited: LFortran's other modfile refusal (not a modfile at all) names no version
    text = read_paste(LFORTRAN).replace(
        "Incompatible format: LFortran Modfile was generated using version '0.48.0-7-g4ef9b6a31-dirty', but current "
        "LFortran version is '0.51.0-77-gf4a3246b4-dirty'", "LCompilers Modfile format not recognized")
    assert "fortran_mod:lfortran-modfile-other-version" not in _ids(text)


# --- CUDA toolkits a build chose --------------------------------------------------------------------

def test_tensorflows_configure_finding_another_nvcc_release(tmp_path):
    (f,) = fired("build-picked-other-cuda-toolkit", ticket_file_facts(tmp_path, TF_NVCC))
    assert "9.1.85" in f.message and "9.2" in f.message
    assert "CUDA_TOOLKIT_PATH=/usr/local/cuda-9.2" in f.fix and "-devel" in f.fix


def test_tensorflows_configure_with_matching_releases_is_not_read():
    # edited: matches_version() accepts 9.2 against 9.2.88, so configure never prints this
    text = read_paste(TF_NVCC).replace("does not match TF_CUDA_VERSION (9.2)", "is incomplete.")
    assert "tensorflow:configure-nvcc-version-mismatch" not in _ids(text)


def test_cmake_finding_an_older_cuda_than_the_project_requires(tmp_path):
    # CMake wraps its message across two lines in the paste
    (f,) = fired("cuda-toolkit-older-than-required", ticket_file_facts(tmp_path, CUDA_OLD))
    assert "CUDA 5.5 at /usr" in f.message and "at least 6.5" in f.message and "nvidia-cuda-toolkit" in f.message
    assert "-DCUDA_TOOLKIT_ROOT_DIR=/usr/local/cuda-6.5" in f.fix


def test_cmake_finding_a_suitable_cuda_is_not_a_toolkit_too_old(tmp_path):
    # edited: the configure that succeeded prints "Found CUDA ... (found suitable version ...)"
    text = read_paste(CUDA_OLD).replace(
        'Could NOT find CUDA: Found unsuitable version "5.5", but required is at\n  least "6.5" (found /usr)',
        '-- Found CUDA: /usr/local/cuda (found suitable version "8.0", minimum required is "6.5")')
    assert not fired("cuda-toolkit-older-than-required", ticket_file_facts(tmp_path, CUDA_OLD, text))


# --- torch's extensions and companions ----------------------------------------------------------------

def test_an_extension_needing_the_split_cuda_library_was_built_against_another_torch(tmp_path):
    (f,) = fired("torch-extension-version-mismatch", ticket_file_facts(tmp_path, SPLIT_CUDA))
    assert "libtorch_cuda_cpp.so" in f.message and "BUILD_SPLIT_CUDA" in f.message
    findings, _ = run_rule("torch-import-failed", ticket_file_facts(tmp_path, SPLIT_CUDA))
    assert not findings   # no frame of torch's own import: torch itself imported


def test_torchs_own_import_missing_the_split_library_stays_torchs_import_failure(tmp_path):
    # edited: the same loader error under torch/__init__.py's "from torch._C import *"
    text = read_paste(SPLIT_CUDA).replace("--> 643     ctypes.CDLL(path)",
                                          'File "/env/lib/python3.9/site-packages/torch/__init__.py", line 199, in <module>\n'
                                          "    from torch._C import *")
    findings, _ = run_rule("torch-extension-version-mismatch", ticket_file_facts(tmp_path, SPLIT_CUDA, text))
    assert not findings


def test_a_torchaudio_built_for_another_cuda_is_reinstalled_from_torchs_index(tmp_path):
    (f,) = fired("torch-companion-cuda-mismatch", ticket_file_facts(tmp_path, TORCHAUDIO))
    assert "torchaudio was built for CUDA 11.7" in f.message and "CUDA 11.8" in f.message
    assert "--index-url https://download.pytorch.org/whl/cu118" in f.fix and '"torch==$v" torchaudio' in f.fix


def test_torchaudios_words_without_the_two_releases_are_not_read(tmp_path):
    # edited: the sentence that names the two releases taken out; the rest is not torchaudio's check
    text = read_paste(TORCHAUDIO).replace("PyTorch has CUDA version 11.8 whereas TorchAudio has CUDA version 11.7. ", "")
    assert "torch_companions:torchaudio-cuda-mismatch" not in _ids(text)
    assert not fired("torch-companion-cuda-mismatch", ticket_file_facts(tmp_path, TORCHAUDIO, text))


def test_ninja_named_in_a_title_without_its_s_is_ninja_missing_alone(tmp_path):
    facts = ticket_file_facts(tmp_path, NINJA)
    (f,) = fired("ninja-missing", facts)
    assert "pip install ninja" in f.fix
    findings, _ = run_rule("required-program-not-installed", facts)
    assert not findings   # ninja-missing answers the FileNotFoundError for 'ninja' too


def test_a_missing_program_other_than_ninja_is_still_required_program_not_installed(tmp_path):
    # edited: the title gone and the program another one: nothing of ninja's own rule is left
    text = read_paste(NINJA).replace("# RuntimeError: Ninja is required to load C++ extension", "# error").replace("'ninja'", "'cmake'")
    (f,) = fired("required-program-not-installed", ticket_file_facts(tmp_path, NINJA, text))
    assert "cmake" in f.message


# --- compilers without OpenMP --------------------------------------------------------------------------

def test_apple_clang_refusing_fopenmp_in_an_r_package_build(tmp_path):
    for paste in (OPENMP_R, OPENMP_SPADE):
        (f,) = fired("compiler-lacks-openmp", ticket_file_facts(tmp_path, paste))
        assert "Rclusterpp" in f.message and "Apple's clang" in f.message
        assert "brew install libomp" in f.fix and "~/.R/Makevars" in f.fix


def test_clang_without_omp_h_on_linux_gets_the_linux_answer(tmp_path):
    # edited: the same build on a Linux node whose clang has no LLVM OpenMP runtime
    text = (read_paste(OPENMP_R).replace("clang: error: unsupported option '-fopenmp'",
                                         "hclust.cpp:12:10: fatal error: 'omp.h' file not found")
            .replace("macOS", "Linux").replace("apple-darwin15.6.0", "pc-linux-gnu"))
    (f,) = fired("compiler-lacks-openmp", ticket_file_facts(tmp_path, OPENMP_R, text))
    assert "module load gcc" in f.fix and "brew" not in f.fix


def test_a_compile_line_with_fopenmp_alone_is_not_read(tmp_path):
    # edited: the compile line and R's failure without clang's refusal
    text = read_paste(OPENMP_R).replace("clang: error: unsupported option '-fopenmp'\n", "")
    assert not {i for i in _ids(text) if i.startswith("openmp_flags:") and i != "openmp_flags:r-compilation-failed"}
    assert not fired("compiler-lacks-openmp", ticket_file_facts(tmp_path, OPENMP_R, text))


# --- pip into a Python the user may not change --------------------------------------------------------

def test_pip_9s_traceback_refused_in_site_packages(tmp_path):
    (f,) = fired("site-packages-not-writable", ticket_file_facts(tmp_path, SITE_PACKAGES))
    assert "/Library/Python/2.7/site-packages/autobahn" in f.message
    assert "python3 -m venv" in f.fix and "never sudo pip" in f.fix


def test_a_permission_refused_outside_site_packages_is_not_this(tmp_path):
    # edited: the refused path is a cache directory, not the interpreter's packages
    text = read_paste(SITE_PACKAGES).replace("'/Library/Python/2.7/site-packages/autobahn'", "'/home/u/.cache/pip/wheels'")
    assert not fired("site-packages-not-writable", ticket_file_facts(tmp_path, SITE_PACKAGES, text))


def test_modern_pips_permission_message_with_a_dist_packages_path(tmp_path):
    # edited: the same refusal in pip 23's words (its install.py create_os_error_message)
    text = ("ERROR: Could not install packages due to an OSError: [Errno 13] Permission denied: "
            "'/usr/lib/python3/dist-packages/torch'\nConsider using the `--user` option or check the permissions.\n")
    (f,) = fired("site-packages-not-writable", ticket_file_facts(tmp_path, SITE_PACKAGES, text))
    assert "/usr/lib/python3/dist-packages/torch" in f.message


def test_ssh_refused_to_a_redacted_host_without_a_launcher_is_a_login_not_a_launch(tmp_path):
    # set R's raspiblitz#1703: a user's own ssh to "<IP>" refused (fail2ban's ban), no launcher's line beside it
    paste = FIXTURES / "tickets_blind_r" / "raspiblitz-1703-ssh-refused-fail2ban-ban.txt"
    assert not fired("ssh-between-nodes-refused", ticket_file_facts(tmp_path, paste))
