"""A program that cannot start on this node: its C library refuses the running kernel as too old
(glibc's "FATAL: kernel too old"), the kernel refuses an executable built for another machine
("Exec format error"), or a tool finds no program it needs on PATH. Read from the emitters' own words
(knowledge/messages/executables.toml); this node's kernel release and machine (uname) sharpen them."""

from __future__ import annotations

import re
import shlex
from typing import Iterator, Optional

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, shell_command, told_evidence, told_text

KERNEL = "kernel-too-old-for-binary"
ARCH = "binary-wrong-architecture"
PROGRAM = "required-program-not-installed"

# file(1)'s machine names and uname -m's, each brought to one machine name (knowledge/elf_machines.toml).
_MACHINES = knowledge.load("elf_machines")
_FILE_MACHINE = _MACHINES["file_elf_machine"]["names"]
_UNAME = _MACHINES["uname_machine"]["names"]


def _text(f: FactView, name: str) -> Optional[str]:
    value = f.get(name)
    return value.strip() if isinstance(value, str) and value.strip() else None


@rule("SYS024", KERNEL, "error", "a program's C library needs a newer Linux kernel than this node runs", impact=6)
def kernel_too_old_for_binary(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, glibc's "FATAL: kernel too old": the start-up check of the C library
        the program was linked with (ld.so for a dynamic program, __libc_start_main for a static
        one) found the running kernel older than the minimum that glibc was configured for. A
        container image (docker, Apptainer) carries its own glibc and shares the host's kernel,
        so an image of a newer distribution fails the same way on an old host.

    Why it matters:
        The program stops before main, every time: nothing in the job can work around it. It is
        typical of clusters still running an old enterprise kernel (2.6.32 of EL6) meeting a
        prebuilt binary, a conda package or a container image built on a recent distribution.

    How to fix:
        Compare the node's kernel (uname -r) with the oldest kernel the binary accepts (file(1)
        prints "for GNU/Linux X.Y.Z"); then run on nodes with a newer kernel, use an image of an
        older distribution, or build the program from source on the node so it links the node's
        own glibc.

    References:
        - https://sourceware.org/git/?p=glibc.git;a=blob;f=sysdeps/unix/sysv/linux/dl-osinfo.h;hb=04277e02d7f54d3582bebcf8386b317018cd5e1d (DL_SYSDEP_OSCHECK: "FATAL: kernel too old")
        - https://sourceware.org/glibc/manual/latest/html_node/Configuring-and-compiling.html (--enable-kernel: the oldest kernel the library supports)
        - https://github.com/dellytools/delly/issues/315 (a prebuilt binary on an EL6 2.6.32 cluster; the maintainer: use the container)
    """
    told = catalogued(f, KERNEL)
    if not told:
        return
    s = told[0]
    kernel = _text(f, "system.kernel")
    on = f"this node runs Linux {kernel}" if kernel else "the node's kernel is older than it needs"
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the C library of the program (or of the container image "
                      f"it runs in) refuses the running kernel as older than its minimum; {on}",
              fix=("uname -r   # the kernel this node runs; a container uses the host's kernel\n"
                   "file -L \"$(command -v PROGRAM)\"   # 'for GNU/Linux X.Y.Z': the oldest kernel the binary's C library accepts\n"
                   "# then: run it on nodes with a newer kernel, use a container image of an older distribution, "
                   "or build the program from source on this node so that it links the node's own glibc"),
              evidence={**told_evidence(s), **({"system.kernel": kernel} if kernel else {})})


def _machine_of_binary(f: FactView) -> Optional[dict]:
    return next((s for s in f.get("ticket.symptoms") or [] if s.get("id") == "executables:file-elf-machine"), None)


@rule("SYS025", ARCH, "warning", "the kernel refused to execute a binary: built for another machine, as a rule", impact=6,
      also={"error": "file(1) names a machine other than this node's"})
def binary_wrong_architecture(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, the kernel refusing to execute a file (ENOEXEC, "Exec format error") as
        bash ("cannot execute binary file: Exec format error"), zsh ("exec format error: FILE"),
        the OCI runtime starting a container ("exec user process caused: exec format error") and
        Python ("[Errno 8] Exec format error") report it. A warning: a binary built for another
        machine (x86-64 on aarch64, ARM on x86-64) is the usual cause, and a file that is not a
        Linux executable at all (a macOS or Windows binary) reads the same. An error where file(1)
        output in the paste names a machine other than this node's (uname -m).

    Why it matters:
        The program never starts. Release downloads, container images and toolchains come per
        machine; an aarch64 node (Grace, Graviton, Jetson) or an x86 workstation given the other
        build fails this way.

    How to fix:
        Compare uname -m with file(1)'s machine for the binary, then take the build for this
        machine (or build it here); for a container image, pull the image for this platform
        (docker run --platform). An emulator (qemu through binfmt_misc) can run a foreign binary,
        slowly.

    References:
        - https://man7.org/linux/man-pages/man2/execve.2.html (ENOEXEC: an executable not in a recognized format, or for the wrong architecture)
        - https://docs.kernel.org/admin-guide/binfmt-misc.html (registering an interpreter such as qemu for foreign binaries)
        - https://docs.docker.com/reference/cli/docker/container/run/#platform (--platform)
    """
    told = catalogued(f, ARCH)
    if not told:
        return
    s = told[0]
    elf = _machine_of_binary(f)
    built = _FILE_MACHINE.get(str(elf.get("machine"))) if elf else None
    node = _text(f, "cpu.arch")
    node_norm = _UNAME.get(node or "", node)
    built_norm = built
    # the window joins the next lines: the name ends at its quote or the first space
    path = str(s.get("file") or "").strip().strip("'\"").split("' ")[0].split('" ')[0].strip("'\"") or "FILE"
    fix = ("uname -m   # this node's machine: x86_64, aarch64, ppc64le\n"
           f"file -L {shlex.quote(path) if path != 'FILE' else path}   # the machine the binary was built for ('x86-64', 'ARM aarch64'); a different one is the cause\n"
           "# take the release built for this machine (names such as linux-amd64/x86_64 or linux-arm64/aarch64), or build it from source here\n"
           "docker image inspect IMAGE --format '{{.Os}}/{{.Architecture}}'   # a container image: its platform; "
           "pull the one for this node with docker pull --platform linux/$(uname -m) IMAGE\n"
           "ls /proc/sys/fs/binfmt_misc/   # qemu-* entries: an emulator registered to run foreign binaries (slow)")
    evidence = told_evidence(s)
    if built and node and built_norm != node_norm:
        yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the binary is built for {built} "
                          f"(line {elf.get('line')}: file(1)) and this node is {node}",
                  fix=fix, severity="error", evidence={**evidence, "binary_machine": built, "cpu.arch": node})
        return
    what = f"the binary is built for {built}" if built else "a binary built for another machine is the usual cause"
    where = f"; this node is {node}" if node else ""
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the kernel refused to execute it (ENOEXEC): {what}{where}; "
                      "a file that is not a Linux executable reads the same",
              fix=fix, evidence={**evidence, **({"binary_machine": built} if built else {})})


# The package that installs a program tools often miss (knowledge/program_packages.toml).
_PACKAGES = knowledge.load("program_packages")["programs"]

_SHELL_SAID = "shell:command-not-found"
# A tool's own words that it needed the program and found none: a warning. The rest (a shell's
# command not found, Node's spawn ENOENT, GNU which, a launcher's execvp, Go's ErrDot or fork/exec
# of a full path) fit another cause too (a typo, a missing cwd, a script's interpreter): info.
_NEEDED = frozenset({
    "executables:cancerit-failed-to-find-program", "program_lookup:go-exec-not-found",
    "program_lookup:go-exec-configured-path-missing", "program_lookup:python-subprocess-file-not-found",
    "program_lookup:python-subprocess-file-not-found-twice", "program_lookup:env-program-not-found",
    "program_lookup:singularity-mksquashfs-cannot-be-found", "program_lookup:rust-cc-failed-to-find-tool",
    "program_lookup:rust-cmake-not-installed",
    # Apptainer's and SingularityCE's own words for a helper the step cannot do without
    # (knowledge/messages/apptainer.toml, read at every tag of Apptainer 1.0-1.4, SingularityCE 3.x-4.x)
    "apptainer:mksquashfs-not-found", "apptainer:unsquashfs-not-found", "apptainer:id-map-helper-not-in-path",
    "apptainer:bootstrap-tool-not-in-path", "apptainer:yum-dnf-not-in-path", "apptainer:overlay-image-tool-not-installed",
    "apptainer:fuse-overlayfs-not-available", "apptainer:fusermount-not-installed", "apptainer:cryptsetup-not-found",
    "apptainer:nvidia-container-cli-not-found", "apptainer:overlay-create-tool-not-in-path",
    # nvidia-installer's PATH search (misc.c find_system_util) and enroot's common::checkcmd (command -v)
    "nvidia_installer:development-tool-missing", "nvidia_installer:utility-missing", "nvidia_installer:dkms-not-found",
    "enroot:enroot-command-not-found",
    # a configure script that looked the program up on PATH and stopped naming it (knowledge/messages/autoconf.toml)
    "autoconf:checked-program-missing", "autoconf:program-not-found-or-not-executable"})
# Apptainer's INFO that it found no FUSE program and goes on without it. A warning all the same: this
# rule's levels grade how surely the words name the cause, and these are Apptainer's own words naming
# the program it looked for (printed only where that kind of mount was wanted), while the run goes on
# degraded (internal/pkg/image/driver/imagedriver.go fuseappsFeature.init; launcher_linux.go then
# converts the SIF to a sandbox). The message says what it does instead.
_FUSE_FALLBACK = "apptainer:fuse-helper-not-found"
_FUSE_WITHOUT = {
    "mount SIF": "it extracts every SIF to a temporary sandbox instead of mounting it (\"Converting SIF file to temporary "
                 "sandbox...\": slower to start, and it needs room in the temporary directory)",
    "mount EXT3 filesystems": "an EXT3 overlay or image cannot be mounted",
    "use overlay": "overlays are made with the kernel's overlay only, which refuses some lower layers without root",
    "use gocryptfs": "an encrypted SIF cannot be built or run without root",
}
# Launchers' execve of the first word: only a bare name with ENOENT is a program PATH lacks.
_LAUNCHERS = frozenset({"mpich:execvp-failed", "slurm:stepd-execve-failed"})
# Words that name the same wording's sibling with its own rule on the line after the needle's.
_NEXT_LINE = frozenset({"program_lookup:python-subprocess-file-not-found"})


def _program(s: dict) -> Optional[str]:
    for k in ("program", "tool", "command", "dash", "zsh", "fish"):
        v = s.get(k)
        if isinstance(v, str) and v.strip():
            return v.strip()
    path = s.get("path") or s.get("file")
    if isinstance(path, str) and path.strip():
        return path.strip().rstrip("/").rsplit("/", 1)[-1] or None
    return None


def _claimed(s: dict, told: list) -> bool:
    """Whether another rule's own entry reads the same line (toolchain's compiler, sched_clients'
    sbatch, cuda_home's nvcc path): that rule answers it, not this one."""
    lines = {s.get("line")} | ({(s.get("line") or 0) + 1} if s.get("id") in _NEXT_LINE else set())
    return any(o is not s and o.get("line") in lines and o.get("rules") and PROGRAM not in o.get("rules")
               for o in told)


# Programs with a rule of their own that reads the builder's words (ninja-missing: torch, Meson, CMake):
# where the paste holds those words anywhere, that rule answers the program's absence, not this one.
_OWN_RULE = {"ninja": "ninja-missing"}


def _answered_by_own_rule(s: dict, told: list) -> bool:
    symbol = _OWN_RULE.get(str(_program(s) or ""))
    return symbol is not None and any(symbol in (o.get("rules") or []) for o in told)


def _usable(s: dict, told: list) -> bool:
    if _claimed(s, told):
        return False
    if s.get("id") in _LAUNCHERS:
        name = str(s.get("file") or s.get("command") or "")
        return bool(name) and "/" not in name and str(s.get("error") or "").startswith("No such file")
    return True


def _install_lines(prog: str) -> str:
    """How to install the program: the table's package per distribution, else each package
    manager's own file search, which answers on the node."""
    q = shlex.quote(prog)
    row = _PACKAGES.get(prog)
    if row is None:
        return (f"dnf provides '*/bin/{prog}' '*/sbin/{prog}'   # RHEL/Rocky/Fedora: the package that installs it\n"
                f"apt-file update && apt-file search --regexp '/s?bin/{prog}$'   # Debian/Ubuntu: the same\n"
                f"# not installable there: ask the administrators for {prog}, or install it in your own environment "
                "(conda, a container image that carries it), then rerun")
    rpm = row.get("rpm")
    out = [f"sudo apt-get install -y {row['debian']}   # Debian/Ubuntu: {row['debian']} installs {row['bin']}/{prog}",
           (f"sudo dnf install -y {rpm}   # RHEL/Rocky/Fedora" if rpm else
            f"dnf provides '*/bin/{prog}' '*/sbin/{prog}'   # RHEL/Rocky/Fedora: the package that installs it, then dnf install it")]
    conf = row.get("conf")
    if conf:
        out.append(f"ls -l /usr/sbin/{q} /usr/bin/{q} /usr/local/bin/{q} 2>&1   # installed outside the job's PATH "
                   "(EL's squashfs-tools puts it in /usr/sbin)?")
        out.append(f"grep -H '^ *{conf}' /etc/apptainer/apptainer.conf /usr/local/etc/apptainer/apptainer.conf "
                   "/etc/singularity/singularity.conf /usr/local/etc/singularity/singularity.conf 2>/dev/null   "
                   f"# '{conf} = /usr/sbin/{prog}' (an administrator's setting) points Apptainer/Singularity at it; "
                   "a user can export PATH=$PATH:/usr/sbin instead")
    return "\n".join(out)


@rule("SYS026", PROGRAM, "warning", "a tool needs a program that is not installed or not on PATH", impact=5,
      also={"info": "a shell's \"command not found\", a launcher's execve or a spawn ENOENT: not installed on that host, "
                    "or a PATH (a module) that does not reach it; the words fit another cause too; or Apptainer's start-up "
                    "note of a FUSE program only some images need (gocryptfs, fuse2fs)"})
def required_program_not_installed(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a tool's own refusal naming a program it runs and did not find (a
        warning): Go's os/exec (Apptainer/Singularity's 'while searching for mksquashfs: exec:
        "mksquashfs": executable file not found in $PATH', Podman's newuidmap, a configured path
        whose stat fails), Python's subprocess (FileNotFoundError raised from _execute_child), GNU
        env (a #!/usr/bin/env line), the Rust cc and cmake crates, and the Sanger cancer pipelines'
        "Failed to find PROGRAM in PATH or local bin folder", the NVIDIA driver installer's "Unable to
        find the development tool `make` in your path" (its system and module utilities, and "Failed
        to find dkms on the system!" under --dkms), and enroot's "[ERROR] Command not found:
        mksquashfs", and a configure script's "checking for gdal-config... no" followed by a
        "configure: error: " naming it (Autoconf's AC_PATH_PROG; R packages' "gdal-config not found
        or not executable"). At info, words that fit another cause
        too: a shell's "command not found" (bash, dash, zsh, fish, tcsh), GNU which's "no X in
        (PATH)", Node's "spawn X ENOENT" (a missing cwd reads the same), Go's ErrDot and fork/exec
        of a full path, Open MPI's exe-not-found, Hydra's execvp and slurmstepd's execve of a bare
        name. A script that ran it (fsl_sub's "line 287: bc") is named. Apptainer and SingularityCE
        name their helpers in their own words (a warning): "could not create squashfs, mksquashfs
        not found", "unsquashfs not found", "newuidmap was not found in PATH", "debootstrap is not
        in PATH", "as overlay requires fuse2fs to be installed", "'fuse-overlayfs' must be used
        ... but is not available", "cryptsetup not found", "could not find nvidia-container-cli";
        Apptainer's INFO "squashfuse not found, will not be able to mount SIF" (and fuse2fs,
        fuse-overlayfs, gocryptfs) is a warning too, since its words name the program, and the
        message says that Apptainer goes on without it (it extracts the SIF to a temporary
        sandbox). SingularityCE's "--remote, --fakeroot, or the proot command are required" is
        info: it offers two other ways.

    Why it matters:
        The step that needs the program stops, often after hours of earlier steps: Apptainer
        cannot pack a SIF without mksquashfs, rootless containers need newuidmap, extension builds
        need ninja or cmake. Adding the tool's own folders to PATH does not help when the program
        itself is not installed.

    How to fix:
        Look the program up (command -v); install its package (the fix names it where
        knowledge/program_packages.toml knows it, else the package manager's own file search
        finds it), load the site's module that provides it, or, where it is installed outside the
        job's PATH (/usr/sbin), add that directory or point Apptainer's 'mksquashfs path' at it.

    References:
        - https://github.com/golang/go/blob/go1.19.8/src/os/exec/lp_unix.go (LookPath, ErrNotFound, ErrDot)
        - https://github.com/python/cpython/blob/v3.11.7/Lib/subprocess.py (Popen._execute_child)
        - https://github.com/apptainer/apptainer/blob/041f3b82471a545cc61eb2c15d70e6a5b4aa4327/internal/pkg/util/bin/bin.go (FindBin: mksquashfs from apptainer.conf or PATH)
        - https://github.com/sylabs/singularity/issues/1334 (mksquashfs not installed)
        - https://github.com/apptainer/apptainer/blob/v1.4.5/internal/pkg/image/driver/imagedriver.go (fuseappsFeature.init: "%v not found, will not be able to %v")
        - https://github.com/apptainer/apptainer/issues/592 (squashfuse not installed; installing it fixed the run)
        - https://github.com/cancerit/cgpBattenberg/blob/0c9e717a717ea0fa92749b13aec290a72ad57d6c/perl/lib/Sanger/CGP/Battenberg/Implement.pm (_which)
        - https://git.savannah.gnu.org/cgit/bash.git/tree/execute_cmd.c?h=bash-5.2 (execute_disk_command: "%s: command not found")
        - https://github.com/c3nl-neuraldynamics/c3nl_cluster/issues/32 (bc missing on the compute nodes)
    """
    told_all = list(f.get("ticket.symptoms") or [])
    told = [s for s in catalogued(f, PROGRAM) if _usable(s, told_all) and not _answered_by_own_rule(s, told_all)]
    if not told:
        return
    tool = next((s for s in told if s.get("id") in _NEEDED), None)
    if tool is None:
        fuses = [s for s in told if s.get("id") == _FUSE_FALLBACK]
        # the SIF's own mount first: the one that changes how every run starts
        fuse = next((s for s in fuses if str(s.get("purpose") or "").startswith("mount SIF")), fuses[0] if fuses else None)
        if fuse is not None:
            yield from _fuse_fallback(fuse)
            return
        s = told[0]
        if s.get("id") == _SHELL_SAID:
            yield from _shell_found_none(s)
        else:
            yield from _hint(s)
        return
    s = tool
    prog = _program(s) or "PROGRAM"
    q = shlex.quote(prog)
    row = _PACKAGES.get(prog)
    used = f" ({prog} is run by {row['used_by']})" if row else ""
    where = (f"the configured path {s.get('path')} holds no file"
             if s.get("id") == "program_lookup:go-exec-configured-path-missing" else
             f"no directory of its PATH holds {prog}")
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the tool needs {prog} and {where}: {prog} is not "
                      f"installed on this host, or only where this PATH does not reach (a module not loaded){used}",
              fix=(f"command -v {q} || echo '{prog} is not on PATH'   # on the host that ran the tool\n"
                   + _install_lines(prog) + "\n"
                   + f"module avail 2>&1 | grep -i -- {q}   # a site module that provides it: module load it before the tool runs"),
              evidence={**told_evidence(s), "program": prog})


def _fuse_fallback(s: dict) -> Iterator[Hit]:
    """Apptainer says at INFO that it found no FUSE program for a kind of image and goes on without it
    (a SIF is extracted instead of mounted): its own words name the program, so the rule's warning,
    with what Apptainer does instead and the package that gives the program back."""
    prog = _program(s) or "squashfuse"
    purpose = str(s.get("purpose") or "")
    key = next((k for k in _FUSE_WITHOUT if purpose.startswith(k) or purpose.replace("FUSE ", "") == k), "")
    without = _FUSE_WITHOUT.get(key, f"it cannot {purpose or 'use that kind of image'}")
    # Only the SIF mount is wanted by every run: the other kinds (gocryptfs, EXT3, overlay) are said at
    # start whether or not the image uses them (blind set M's cat12-docker#14: "gocryptfs not
    # found" on a plain docker:// run), so those are a hint.
    sif = key == "mount SIF"
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": Apptainer found no {prog} on its paths and goes on "
                      f"without it: {without}; {prog} is not installed on this host (Apptainer prints it at INFO: the run "
                      + ("itself goes on, degraded)" if sif else
                         "itself goes on, and only an image of that kind needs it)"),
              severity="warning" if sif else "info",
              fix=(f"command -v {shlex.quote(prog)} || echo '{prog} is not on PATH'   # on the host that runs apptainer\n"
                   + _install_lines(prog) + "\n"
                   + "apptainer exec IMAGE.sif true   # again: no 'not found, will not be able to' line, "
                     "and no 'Converting SIF file to temporary sandbox...'"),
              evidence={**told_evidence(s), "program": prog})


def _hint(s: dict) -> Iterator[Hit]:
    """Words that say a program was not found and fit another cause too: info."""
    prog = _program(s)
    if prog is None:   # Open MPI's help names it on its "Executable:" line, beyond the message's own lines
        yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the launcher found no program of the name its "
                          "help prints on the 'Executable:' line, on the host its 'Node:' line names: not installed or not on "
                          "that host's PATH, or the command line's first word is not the program (a misspelt option)",
                  fix=("# on the host of the 'Node:' line: command -v <the Executable: name>; give mpirun the program's full path, "
                       "or export PATH (mpirun -x PATH) so that every node finds it"),
                  evidence=told_evidence(s), severity="info")
        return
    q = shlex.quote(prog)
    other = {"program_lookup:node-spawn-enoent": "or the working directory given to spawn does not exist (Node says the same)",
             "program_lookup:go-fork-exec-enoent": "or the file is a script whose #! interpreter is missing",
             "program_lookup:go-exec-errdot": "only a copy in the current directory was found, which Go 1.19+ refuses to run",
             "openmpi:prun:exe-not-found": "or the command line's first word is not the program (a misspelt option)",
             "apptainer:proot-required-unprivileged-build": "and SingularityCE builds this definition file as a non-root "
                                                            "user only under proot, with --fakeroot or with --remote",
             }.get(str(s.get("id")), "or it is installed where this PATH does not reach (a module not loaded)")
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {prog} was not found: it is not installed on the host "
                      f"that ran it, {other}",
              fix=(f"command -v {q} || echo '{prog} is not on PATH'   # on the host that ran it (a compute node: inside a job)\n"
                   + _install_lines(prog) + "\n"
                   + f"module avail 2>&1 | grep -i -- {q}   # a site module that provides it"),
              evidence={**told_evidence(s), "program": prog}, severity="info")


def _shell_found_none(s: dict) -> Iterator[Hit]:
    """A shell's "command not found": consistent with a missing program, also with a PATH a module would set."""
    prog = shell_command(s) or "PROGRAM"
    text = told_text(s)
    # bash's and dash's forms start with the script that ran the program ("/path/fsl_sub: line 287: bc: ...")
    m = re.match(r"(?P<script>/[^\s:]{1,200}): (?:line )?[0-9]{1,7}: ", text)
    script = m.group("script") if m else None
    who = f"the script {script}" if script else "the shell"
    q = shlex.quote(prog)
    yield Hit(message=f"line {s.get('line')}: \"{text}\": {who} ran {prog} and the shell found it on no directory of "
                      f"PATH: {prog} is not installed on the host that ran it (a compute node's image can lack what a "
                      "login node has), or it is installed where this PATH does not reach (a module not loaded)",
              fix=(f"command -v {q} || echo '{prog} is not on PATH'   # on the host that ran it (a compute node: inside a job, srun --pty bash)\n"
                   f"module avail 2>&1 | grep -i -- {q}   # a site module that provides it: module load it before the tool runs\n"
                   f"# not installed there: the administrators add {prog} to the node image (rpm -qf / dpkg -S on a host that has it names "
                   "the package), or install it in your own environment (conda, a container image that carries it)"
                   + (("\n" + _install_lines(prog)) if prog in _PACKAGES else "")),
              evidence={**told_evidence(s), "program": prog}, severity="info")
