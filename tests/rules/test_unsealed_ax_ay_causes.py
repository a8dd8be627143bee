"""Causes the pastes of sets AX and AY (unsealed 2026-11-29) show in their emitters' own words, each
read from the real paste; where a variant is needed, the real paste is edited in memory and the edit
is said."""

from __future__ import annotations

from conftest import FIXTURES, run_main
from hpcdoctor.triage.messages import find_messages
from rulekit import fired, read_paste, run_rule, ticket_file_facts

AX = FIXTURES / "tickets_blind_ax"
AY = FIXTURES / "tickets_blind_ay"

GLIBC_TITLE = AY / "h3-493-cluster-glibc-older-than-native-library.txt"
GLIBCXX_UNQUOTED = AY / "starexec-274-solver-needs-newer-libstdcxx.txt"
ENROOT = AX / "enroot-205-image-without-nvidia-visible-devices.txt"
NVCC_PATH = AY / "openmm-2851-nvcc-not-at-default-cuda-path.txt"
RUST_CUDA = AY / "kaspa-miner-44-no-cuda-toolkit-for-build.txt"
FINDMPI = AY / "mumps-superbuild-83-intel-mpi-bin-not-on-path.txt"


# --- the loader's version refusal with its quotes (and the library's name) gone -----------------

def test_a_title_naming_only_glibcs_missing_version_is_glibc_older_than_binary(tmp_path):
    (f,) = fired("glibc-older-than-binary", ticket_file_facts(tmp_path, GLIBC_TITLE))
    assert "2.14" in f.message and "ldd --version" in f.fix


def test_unquoted_glibcxx_versions_of_the_system_libstdcxx_are_libstdcxx_older_than_binary(tmp_path):
    (f,) = fired("libstdcxx-older-than-binary", ticket_file_facts(tmp_path, GLIBCXX_UNQUOTED))
    assert "GLIBCXX_3.4.21" in f.message and "/lib64/libstdc++.so.6" in f.message
    assert "CXXABI_1.3.8" in f.message   # every version the three lines name


def test_an_unquoted_version_that_is_not_glibcs_or_libstdcxxs_is_not_the_loaders():
    # the loader's words, unquoted, with a version name of no library the reader knows by name
    assert not [s for s in find_messages("libfoo.so.1: version FOO_1.2 not found\nversion 3.9 not found\n")
                if s["id"] == "loader:version-not-found"]


# --- enroot/pyxis: a container started without the driver ---------------------------------------

def test_no_driver_in_a_pyxis_container_of_a_gpu_job_is_enroots_hook_not_run(tmp_path):
    (f,) = fired("container-nvidia-libs-not-bound", ticket_file_facts(tmp_path, ENROOT))
    assert "pyxis" in f.message and "--container-image" in f.message and "NVIDIA_VISIBLE_DEVICES" in f.message
    assert "export NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=compute,utility" in f.fix
    # gpu-driver-unusable does not answer the host's driver for it
    findings, _ = run_rule("gpu-driver-unusable", ticket_file_facts(tmp_path, ENROOT))
    assert not findings


def test_no_driver_in_a_pyxis_container_of_a_job_without_gpus_is_not_the_hooks(tmp_path):
    # edited: the srun line asks for no GPUs (a CPU job's container has no driver to inject)
    text = read_paste(ENROOT).replace("--nodes=1 --gpus=2", "--nodes=1")
    findings, _ = run_rule("container-nvidia-libs-not-bound", ticket_file_facts(tmp_path, ENROOT, text))
    assert not findings


def test_pyxiss_own_sentence_naming_its_option_is_not_a_container_started():
    line = ('slurmstepd: error: pyxis: error: a container with name "x" does not exist, and --container-image is '
            "not set\n")
    assert not [s for s in find_messages(line) if s["id"] == "enroot:pyxis-container-option"]


# --- nvcc missing where a program looks for it ---------------------------------------------------

def test_the_shells_no_nvcc_at_openmms_default_path_is_cuda_toolkit_nvcc_missing(tmp_path):
    (f,) = fired("cuda-toolkit-nvcc-missing", ticket_file_facts(tmp_path, NVCC_PATH))
    assert "/usr/local/cuda" in f.message and "OPENMM_CUDA_COMPILER" in f.fix and "command -v nvcc" in f.fix


def test_each_shells_words_for_a_missing_nvcc_path_are_read():
    # recorded on the development VM (knowledge/messages/shell.toml nvcc-path-not-found)
    for line in ("bash: /usr/local/cuda-none/bin/nvcc: No such file or directory",
                 "sh: 1: /usr/local/cuda-none/bin/nvcc: not found",
                 "zsh:1: no such file or directory: /usr/local/cuda-none/bin/nvcc",
                 "/usr/local/cuda-none/bin/nvcc: Command not found.",
                 "fish: Unknown command: /usr/local/cuda-none/bin/nvcc"):
        assert "shell:nvcc-path-not-found" in {s["id"] for s in find_messages(line + "\n")}, line
    assert "shell:nvcc-path-not-found" not in {
        s["id"] for s in find_messages("ls: /usr/local/cuda/bin/nvcc: No such file or directory\n")}


def test_rust_cudas_build_script_panic_is_cuda_toolkit_nvcc_missing(tmp_path):
    (f,) = fired("cuda-toolkit-nvcc-missing", ticket_file_facts(tmp_path, RUST_CUDA))
    assert "Rust CUDA crate" in f.message and "CUDA_LIBRARY_PATH" in f.fix and "cargo build" in f.fix


# --- CMake's FindMPI --------------------------------------------------------------------------------

def test_findmpi_finding_no_mpi_is_mpi_devel_missing(tmp_path):
    (f,) = fired("mpi-devel-missing", ticket_file_facts(tmp_path, FINDMPI))
    assert "FindMPI" in f.message and "MPI_C" in f.message and "-DMPI_HOME=" in f.fix
    # not a library's development package (library-devel-headers-missing's own reading of FindPackageHandleStandardArgs)
    findings, _ = run_rule("library-devel-headers-missing", ticket_file_facts(tmp_path, FINDMPI))
    assert not findings


def test_findmpi_of_cmake_before_3_10_is_mpis_too():
    line = "-- Could NOT find MPI_C (missing: MPI_C_LIBRARIES MPI_C_INCLUDE_PATH)\n"
    assert {s["id"] for s in find_messages(line)} >= {"cmake_find:could-not-find-mpi"}
    assert "cmake_find:could-not-find-missing-files" not in {s["id"] for s in find_messages(line)}


# --- healthy controls that were declined: their lines are read, and nothing fires ------------------

DSS_LSMOD = AX / "data-science-stack-90-diagnostics-wants-nvidia-smi-healthy.txt"
MIOPEN_KDB = AX / "miopen-2123-missing-kdb-warning-healthy.txt"


def test_lsmods_nvidia_rows_and_miopens_kdb_warning_are_read_and_stay_silent():
    for path, wanted in ((DSS_LSMOD, "kmod:lsmod-nvidia-loaded"), (MIOPEN_KDB, "miopen:missing-system-kdb")):
        assert wanted in {s["id"] for s in find_messages(read_paste(path))}, path.name
        result = run_main("check", "--from", str(path))
        assert result.returncode == 0 and wanted.split(":")[1] in result.stdout, path.name   # read, answered, no finding


# --- a conda environment's libtcl loaded by Environment Modules 3.2's modulecmd --------------------

CONDA_LDD = AY / "conda-4023-conda-libtcl-shadows-system-tcl.txt"
CONDA_EXPORT = AY / "sheffield-hpc-564-conda-lib-on-ld-library-path-shadows-tcl.txt"


def test_modulecmds_tcl_failure_with_ldd_showing_condas_libtcl_is_the_shadowing(tmp_path):
    (f,) = fired("conda-lib-shadows-system-library", ticket_file_facts(tmp_path, CONDA_LDD))
    assert "/home/gawbul/miniconda2/lib/libtcl8.5.so" in f.message and "Cannot initialize TCL" in f.message
    assert "grep -vE" in f.fix and "paste -sd:" in f.fix


def test_modulecmds_tcl_failure_after_exporting_a_conda_lib_is_the_shadowing(tmp_path):
    (f,) = fired("conda-lib-shadows-system-library", ticket_file_facts(tmp_path, CONDA_EXPORT))
    assert ".conda/envs/caffe/lib" in f.message


def test_a_non_conda_folder_on_ld_library_path_is_not_condas_shadowing(tmp_path):
    # edited: the export names a site's own library folder, not a conda environment's
    text = read_paste(CONDA_EXPORT).replace("/home/$USER/.conda/envs/caffe/lib", "/opt/site/lib")
    assert not fired("conda-lib-shadows-system-library", ticket_file_facts(tmp_path, CONDA_EXPORT, text))


def test_condas_ldd_row_of_another_library_is_not_the_module_commands_tcl(tmp_path):
    # edited: ldd resolves libz, not libtcl, into conda (modulecmd's Tcl is the system's)
    text = read_paste(CONDA_LDD).replace("libtcl8.5.so => /home/gawbul/miniconda2/lib/libtcl8.5.so",
                                         "libz.so.1 => /home/gawbul/miniconda2/lib/libz.so.1")
    findings, _ = run_rule("conda-lib-shadows-system-library", ticket_file_facts(tmp_path, CONDA_LDD, text))
    assert not findings


# --- a fixed nvcc path missing where a CUDA module is loaded: the build's path, not the toolkit -----

GPU_BURN = FIXTURES / "tickets_blind_f" / "gpu-burn-2-makefile-hardcodes-nvcc-healthy.txt"


def test_a_makefiles_fixed_nvcc_path_beside_a_loaded_cuda_module_is_not_a_missing_toolkit(tmp_path):
    # gpu-burn#2 (set F, healthy: the Makefile's own path; its label says this rule must not fire); the
    # first scoring after nvcc-path-not-found was read called it an error
    assert "shell:nvcc-path-not-found" in {s["id"] for s in find_messages(read_paste(GPU_BURN))}   # read, and shown
    assert not fired("cuda-toolkit-nvcc-missing", ticket_file_facts(tmp_path, GPU_BURN))


def test_without_the_module_line_the_missing_nvcc_path_is_the_error(tmp_path):
    # edited: the two module lines removed (nothing shows a toolkit loaded elsewhere)
    text = read_paste(GPU_BURN).replace("$ module load cuda/8.0.61\n", "").replace("$ module load cudnn/v7.0\n", "")
    (f,) = fired("cuda-toolkit-nvcc-missing", ticket_file_facts(tmp_path, GPU_BURN, text))
    assert f.severity == "error"
