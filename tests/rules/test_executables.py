"""kernel-too-old-for-binary, binary-wrong-architecture and required-program-not-installed on real
public pastes (tests/fixtures/pastes/SOURCES.md, set M's tickets) through the real catalogue
(knowledge/messages/executables.toml) and the paste path."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulekit import facts, fired, paste_facts, recorded_paste_facts, told_facts
from hpcdoctor.triage.messages import find_messages

S = "../tickets_blind_s/"   # set S, unsealed: recorded_paste_facts reads fixtures/pastes/<name>

SET_M = Path(__file__).resolve().parent.parent / "fixtures" / "tickets_blind_m"


def _ticket(tmp_path, name):
    return paste_facts(tmp_path, (SET_M / f"{name}.txt").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["docker-8-host-kernel-too-old-for-image", "delly-315-kernel-too-old-for-prebuilt-binary",
                                  "diamond-188-kernel-too-old-for-prebuilt-binary"])
def test_glibc_kernel_too_old_in_set_m(tmp_path, name):
    (f,) = fired("kernel-too-old-for-binary", _ticket(tmp_path, name))
    assert f.severity == "error" and "FATAL: kernel too old" in f.message
    assert "uname -r" in f.fix and "file -L" in f.fix


def test_glibc_kernel_too_old_in_a_toil_log():
    (f,) = fired("kernel-too-old-for-binary", recorded_paste_facts("cactus-383-kernel-too-old-toil-log.txt"))
    assert "line 6" in f.message


def test_the_node_kernel_is_named_when_known():
    g = facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages("FATAL: kernel too old\n"),
                                  "system.kernel": "2.6.32-696.30.1.el6.x86_64"})
    (f,) = fired("kernel-too-old-for-binary", g)
    assert "2.6.32-696.30.1.el6.x86_64" in f.message


def test_silent_on_another_program_saying_its_kernel_is_too_old():
    # Singularity's own refusal of a feature, not glibc's start-up check
    text = (Path(__file__).resolve().parent.parent / "fixtures" / "pastes" / "singularity-1174-instance-feature-kernel-too-old.txt").read_text()
    g = facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)})
    assert not fired("kernel-too-old-for-binary", g)


@pytest.mark.parametrize("name, quoted", [
    ("emailengine-171-x86-binary-on-aarch64-server", "./emailengine: cannot execute binary file"),
    ("nuc970-linux-kernel-61-arm-binary-on-x86-host", "/usr/local/arm_linux_4.8/usr/bin/make: cannot execute binary file"),
])
def test_exec_format_error_in_set_m_is_a_warning(tmp_path, name, quoted):
    (f,) = fired("binary-wrong-architecture", _ticket(tmp_path, name))
    assert f.severity == "warning" and quoted in f.message and "uname -m" in f.fix


def test_file_output_names_the_binary_machine():
    (f,) = fired("binary-wrong-architecture", recorded_paste_facts("exatorrent-25-amd64-binary-on-arm64.txt"))
    assert "built for x86_64" in f.message and "file -L ./exatorrent-linux-amd64" in f.fix


def test_a_machine_mismatch_with_this_node_is_an_error():
    text = (Path(__file__).resolve().parent.parent / "fixtures" / "pastes" / "exatorrent-25-amd64-binary-on-arm64.txt").read_text()
    g = facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text), "cpu.arch": "aarch64"})
    (f,) = fired("binary-wrong-architecture", g)
    assert f.severity == "error" and "x86_64" in f.message and "aarch64" in f.message
    same = facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text), "cpu.arch": "x86_64"})
    assert [x.severity for x in fired("binary-wrong-architecture", same)] == ["warning"]


def test_a_kernel_module_exec_format_error_is_not_a_binary():
    # kmod's "could not insert": a module built for another kernel (kmod.toml), not an executable
    g = facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages("modprobe: ERROR: could not insert 'amdgpu': Exec format error\n")})
    assert not fired("binary-wrong-architecture", g)


def test_a_tool_that_finds_no_rscript(tmp_path):
    (f,) = fired("required-program-not-installed", _ticket(tmp_path, "cgpbattenberg-20-r-not-installed-on-system"))
    assert f.severity == "warning" and "Rscript" in f.message and "command -v Rscript" in f.fix


def test_a_bare_command_not_found_is_only_a_hint():
    # the shell's word alone: not installed there, or the program only needs a module load: info, naming both
    (f,) = fired("required-program-not-installed", recorded_paste_facts("slurm-22.05-srun-execve-command-not-on-path.txt"))
    assert f.severity == "info" and "not installed" in f.message and "module" in f.message


# shells' command-not-found lines (shell.toml), on set S's ticket and the shells' formats
def test_a_script_missing_bc_is_a_hint_naming_the_script():
    (f,) = fired("required-program-not-installed", recorded_paste_facts(S + "c3nl-cluster-32-bc-missing-on-compute-nodes.txt"))
    assert f.severity == "info" and "/apps/software/fsl/5.0.10/bin/fsl_sub" in f.message and "command -v bc" in f.fix


def test_a_command_with_its_own_entry_is_left_to_its_rule():
    # conda not on PATH is conda-activate-not-initialised's (shell.toml's conda-not-found), not a missing program
    assert not fired("required-program-not-installed",
                     recorded_paste_facts("bash-5.2-batch-script-conda-command-not-found.txt"))


def test_command_not_found_forms_of_other_shells():
    for line, prog in (("/usr/bin/dash: 1: bc: not found\n", "bc"), ("zsh:1: command not found: bc\n", "bc"),
                       ("fish: Unknown command: bc\n", "bc")):
        (f,) = fired("required-program-not-installed", told_facts(line))
        assert f.evidence["program"] == prog


# Launchers' own words for a program not found (knowledge/messages/program_lookup.toml), issue 24
V = "../tickets_blind_v/"


@pytest.mark.parametrize("name, prog", [
    (V + "sylabs-singularity-1334-mksquashfs-not-installed.txt", "mksquashfs"),
    (V + "sheffield-hpc-953-mksquashfs-not-on-path.txt", "mksquashfs"),
    ("flynn-3902-mksquashfs-not-found.txt", "mksquashfs"),
    ("podman-9271-cannot-find-newuidmap.txt", "newuidmap"),
    ("buildah-3251-newgidmap-not-found-wrapped.txt", "newgidmap"),
    ("img-166-newuidmap-not-found-install-uidmap.txt", "newuidmap"),
    ("bitnet-272-subprocess-cmake-not-found.txt", "cmake"),
    ("pytorch-26798-ninja-filename-twice.txt", "ninja"),
    ("ufonet-366-env-python-not-found.txt", "python"),
    ("cmake-rs-118-cmake-not-installed.txt", "cmake"),
    # recorded on the development VM
    ("go-1.19-os-exec-program-lookup-errors.txt", "mksquashfs"),
    ("python-3.11-subprocess-program-not-on-path.txt", "mksquashfs"),
    ("coreutils-9.1-env-program-not-on-path.txt", "git-lfs"),
])
def test_a_tool_that_needed_a_program_is_a_warning_naming_it(name, prog):
    (f,) = fired("required-program-not-installed", recorded_paste_facts(name))
    assert f.severity == "warning" and f.evidence["program"] == prog and f"command -v {prog}" in f.fix


def test_mksquashfs_names_its_package_and_apptainer_conf():
    (f,) = fired("required-program-not-installed", recorded_paste_facts(V + "sylabs-singularity-1334-mksquashfs-not-installed.txt"))
    assert "apt-get install -y squashfs-tools" in f.fix and "mksquashfs path" in f.fix and "/usr/sbin" in f.fix


def test_uidmap_names_its_packages():
    (f,) = fired("required-program-not-installed", recorded_paste_facts("podman-9271-cannot-find-newuidmap.txt"))
    assert "apt-get install -y uidmap" in f.fix and "dnf install -y shadow-utils" in f.fix


@pytest.mark.parametrize("name", ["node-20-spawn-program-enoent.txt", "srcbook-483-spawn-git-enoent.txt",
                                  "qe-32-mpirun-executable-not-found.txt", "shells-mksquashfs-not-on-path.txt"])
def test_words_that_fit_another_cause_are_info(name):
    (f,) = fired("required-program-not-installed", recorded_paste_facts(name))
    assert f.severity == "info"


@pytest.mark.parametrize("line, prog", [
    # the emitters' format strings filled in: no public paste recorded
    ("/usr/bin/which: no mksquashfs in (/usr/local/bin:/usr/bin)\n", "mksquashfs"),
    ('exec: "mksquashfs": cannot run executable found relative to current directory\n', "mksquashfs"),
])
def test_which_and_errdot_are_info(line, prog):
    (f,) = fired("required-program-not-installed", told_facts(line))
    assert f.severity == "info" and f.evidence["program"] == prog


@pytest.mark.parametrize("line", [
    'error occurred: Failed to find tool. Is `musl-gcc` installed?\n',   # cc-rs before fcf940ef, format filled in
    'ToolNotFound: failed to find tool "nvcc": No such file or directory (os error 2)\n',   # cc-rs now, format filled in
])
def test_the_cc_crate_finding_no_tool_is_a_warning(line):
    (f,) = fired("required-program-not-installed", told_facts(line))
    assert f.severity == "warning"


@pytest.mark.parametrize("name", [
    "python-3.11-data-file-not-found.txt",          # open('data.csv'): a data file, no subprocess
    "rust-1.95-command-spawn-not-found.txt",        # std's io::Error names no program
    "alpine-mpich-8-hydra-execvp-local-file.txt",   # Hydra's execvp of the user's own ./test
    "ninja-1463-build-ninja-missing.txt",           # ninja ran; a directory is missing
])
def test_near_misses_are_not_a_missing_program(name):
    assert not fired("required-program-not-installed", recorded_paste_facts(name))


def test_a_compiler_in_a_subprocess_traceback_is_left_to_its_own_rule():
    text = ("    raise child_exception_type(errno_num, err_msg, err_filename)\n"
            "FileNotFoundError: [Errno 2] No such file or directory: 'gcc'\n")
    assert not fired("required-program-not-installed", told_facts(text))


def test_a_package_named_in_prose_is_not_a_missing_program():
    text = (Path(__file__).resolve().parent.parent / "fixtures" / "pastes" / "flynn-3902-prose-install-squashfs-tools.txt").read_text()
    g = facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)})
    assert not fired("required-program-not-installed", g)


# Apptainer's and SingularityCE's own words for a helper they run (knowledge/messages/apptainer.toml)
def test_apptainer_without_squashfuse_is_a_warning_naming_its_package():
    # apptainer/apptainer#592: Apptainer 1.1.0-rc.1 says at INFO that it found no squashfuse and
    # extracts the SIF to a sandbox; the reporter's fix: install squashfuse
    (f,) = fired("required-program-not-installed", recorded_paste_facts("apptainer-592-squashfuse-not-found.txt"))
    assert f.severity == "warning" and "squashfuse" in f.evidence["program"]
    assert "temporary sandbox" in f.message and "goes on" in f.message
    assert "apt-get install -y squashfuse" in f.fix


@pytest.mark.parametrize("line,prog,pkg", [
    ("INFO:    fuse2fs not found, will not be able to mount EXT3 filesystems\n", "fuse2fs", "fuse2fs"),
    ("INFO:    fuse-overlayfs not found, will not be able to use FUSE overlay\n", "fuse-overlayfs", "fuse-overlayfs"),
    ("INFO:    gocryptfs not found, will not be able to use gocryptfs\n", "gocryptfs", "gocryptfs"),
    ("INFO:    squashfuse not found, will not be able to mount SIF or other squashfs files\n", "squashfuse", "squashfuse"),
])
def test_each_fuse_helper_apptainer_misses_is_named(tmp_path, line, prog, pkg):
    # internal/pkg/image/driver/imagedriver.go's format string, filled in with each program it looks for
    (f,) = fired("required-program-not-installed", paste_facts(tmp_path, line))
    assert f.evidence["program"] == prog and f"apt-get install -y {pkg}" in f.fix


@pytest.mark.parametrize("line,prog", [
    ("could not create squashfs, mksquashfs not found\n", "mksquashfs"),
    ("file does not exist: could not extract squashfs data, unsquashfs not found\n", "unsquashfs"),
    ("conveyor failed to get: debootstrap is not in PATH... Perhaps 'apt-get install' it: exec: \"debootstrap\": "
     "executable file not found in $PATH\n", "debootstrap"),
    ("use of image \"/home/user/overlay.img\" as overlay requires fuse2fs to be installed: exec: \"fuse2fs\": "
     "executable file not found in $PATH\n", "fuse2fs"),
    ("'fuse-overlayfs' must be used for this overlay specification, but is not available: exec: \"fuse-overlayfs\": "
     "executable file not found in $PATH\n", "fuse-overlayfs"),
])
def test_a_helper_the_step_cannot_do_without_is_a_warning(tmp_path, line, prog):
    # the format strings of Apptainer 1.0-1.4 and SingularityCE 3.x-4.x, filled in (no public paste recorded)
    fs = fired("required-program-not-installed", paste_facts(tmp_path, line))
    assert fs and fs[0].severity == "warning" and fs[0].evidence["program"] == prog


def test_newuidmap_not_in_the_starters_path_names_uidmap():
    (f,) = fired("required-program-not-installed", recorded_paste_facts("apptainer-601-newuidmap-not-in-path.txt"))
    assert f.severity == "warning" and f.evidence["program"] == "newuidmap"
    assert "apt-get install -y uidmap" in f.fix and "dnf install -y shadow-utils" in f.fix


def test_proot_among_three_ways_is_info(tmp_path):
    g = paste_facts(tmp_path, "FATAL:   --remote, --fakeroot, or the proot command are required to build this source "
                              "as a non-root user\n")
    (f,) = fired("required-program-not-installed", g)
    assert f.severity == "info" and "--fakeroot" in f.message and "apt-get install -y proot" in f.fix


def test_apptainer_using_its_fuse_helpers_is_not_a_missing_program(tmp_path):
    g = paste_facts(tmp_path, "INFO:    Converting SIF file to temporary sandbox...\n"
                              "WARNING: squashfuse mount failed, falling back to extraction: mount failed: exit status 1\n"
                              "INFO:    Cleaning up image...\n")
    assert not fired("required-program-not-installed", g)
# The NVIDIA driver installer's and enroot's own PATH searches (nvidia_installer.toml, enroot.toml). No public
# thread quotes these lines: each is its emitter's format string with a value filled in, as the catalogue cites it.
@pytest.mark.parametrize("line, prog", [
    # NVIDIA/nvidia-installer misc.c @ 590.48.01 check_development_tool
    ("ERROR: Unable to find the development tool `make` in your path; please make sure that you have the package "
     "'make' installed.  If make is installed on your system, then please check that `make` is in your PATH.\n", "make"),
    # misc.c find_module_utils
    ("ERROR: Unable to find the module utility `modprobe`; please make sure you have the package 'module-init-tools' "
     "or 'kmod' installed.  If you do have 'module-init-tools' or 'kmod' installed, then please check that `modprobe` "
     "is in your PATH.\n", "modprobe"),
    # misc.c run_dkms
    ("ERROR: Failed to find dkms on the system!\n", "dkms"),
    # NVIDIA/enroot src/common.sh @ v4.1.2 common::checkcmd
    ("[ERROR] Command not found: mksquashfs\n", "mksquashfs")])
def test_the_driver_installers_and_enroots_missing_programs(line, prog):
    (f,) = fired("required-program-not-installed", told_facts(line))
    assert f.severity == "warning" and f.evidence["program"] == prog and f"command -v {prog}" in f.fix


def test_an_installer_that_found_its_tools_is_not_a_missing_program():
    # nvidia-installer's expert log of a tool it did find (misc.c: "found `%s` : `%s`")
    assert not fired("required-program-not-installed", told_facts("found `make` : `/usr/bin/make`\n"))


def test_a_fuse_program_only_some_images_need_is_a_hint():
    # blind set M (unsealed): cat12-docker#14, a plain docker:// run under Apptainer 1.4.1 printing
    # "gocryptfs not found" at start; the failure was the image's owner-only script (a healthy control)
    from pathlib import Path
    text = (Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_m"
            / "cat12-docker-14-image-scripts-owner-only-healthy.txt").read_text(encoding="utf-8")
    (f,) = fired("required-program-not-installed", told_facts(text))
    assert f.severity == "info" and "gocryptfs" in f.message and "only an image of that kind needs it" in f.message
