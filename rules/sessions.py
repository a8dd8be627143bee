"""What a user's session needs from the node and does not get: user namespaces (Apptainer without
setuid, bubblewrap, rootless podman), a per-user runtime directory (XDG_RUNTIME_DIR) in a batch job,
and the VNC server a remote-desktop job starts. Read from the programs' own messages
(knowledge/messages/userns.toml, apptainer.toml, xdg_runtime.toml, shell.toml) and, live, from the
kernel's sysctls (checks/containers.py)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, first_stated, told_evidence, told_text

# ----------------------------------------------------------------------------------------------
# ENV057 user-namespaces-disabled
USERNS = "user-namespaces-disabled"
# Lines that only hint (Apptainer's INFO before its FATAL) or are only consistent with a refusal
# (bwrap's uid_map write under AppArmor): the finding quotes the line that states it when there is one.
_HINT = "apptainer:admin-may-need-to-enable-user-namespaces"
_APPARMOR = "userns:bwrap-uid-map-denied"
_USERNS_FIX = (
    "cat /proc/sys/user/max_user_namespaces /proc/sys/kernel/unprivileged_userns_clone "
    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns 2>/dev/null   # 0, 0, 1: which of the three refuses "
    "(files absent where the kernel has no such switch)\n"
    "unshare --user --map-root-user true && echo 'user namespaces work here'   # util-linux: the kernel's answer for you\n"
    "echo 'user.max_user_namespaces = 15000' | sudo tee /etc/sysctl.d/90-userns.conf && sudo sysctl --system   "
    "# administrators: turn them on (Debian/Ubuntu kernels also kernel.unprivileged_userns_clone = 1)\n"
    "sudo dnf install apptainer-suid   # or, where the site will not enable them, a setuid Apptainer "
    "(apt: the apptainer-suid package), which needs no user namespace to run a container")


# unshare(2) with CLONE_NEWUSER: what each errno means (man 2 unshare, Linux man-pages 6.9), by the
# number Charliecloud prints after its message.
_UNSHARE_ERRNO = {
    "22": "EINVAL: the kernel has no user namespaces (built without CONFIG_USER_NS, or, on RHEL/CentOS 7 kernels, "
          "turned off: user.max_user_namespaces = 0, or the user_namespace.enable=1 boot option missing before 7.6)",
    "1": "EPERM: unprivileged user namespaces are not allowed (kernel.unprivileged_userns_clone = 0 on Debian/Ubuntu "
         "kernels, namespace.unpriv_enable=1 missing on RHEL 7.4/7.5), or a seccomp filter or chroot forbids them",
    "28": "ENOSPC: user.max_user_namespaces is 0 or spent, or namespaces are nested 32 deep",
    "87": "EUSERS: user.max_user_namespaces is 0 or spent (kernels before 4.9 say EUSERS for ENOSPC)",
    "12": "ENOMEM: the kernel could not allocate the namespace",
}


# enroot's helpers print err(3)'s strerror after unshare(CLONE_NEWUSER): EPERM (unprivileged_userns_clone
# = 0), ENOSPC (user.max_user_namespaces reached or 0) and EINVAL (a kernel without them, RHEL 7 without
# user_namespace.enable=1) are the kernel's switches; EACCES is seen with every switch on (a security
# module, NVIDIA/enroot#247), and joining (setns) an existing namespace is another failure.
_ENROOT_HELPER = "enroot:enroot-helper-user-namespace"
_ENROOT_REFUSALS = frozenset({"Operation not permitted", "No space left on device", "Invalid argument"})


def _kernel_refusal(s: dict) -> bool:
    return s.get("id") != _ENROOT_HELPER or (s.get("what") == "create" and s.get("error") in _ENROOT_REFUSALS)


@rule("ENV057", USERNS, "error", "the kernel refuses unprivileged user namespaces", impact=6,
      also={"warning": "a namespace's uid_map write refused (AppArmor's restriction on Ubuntu 24.04) or only Apptainer's hint",
            "info": "live: user.max_user_namespaces = 0, kernel.unprivileged_userns_clone = 0 or AppArmor's restriction on"})
def user_namespaces_disabled(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a program refused a user namespace by the kernel: Apptainer's (and
        Singularity's) "Failed to create user namespace: user namespace disabled" (and nserror's
        other reasons: not supported by your system, maximum number of user namespaces exceeded,
        unprivileged_userns_clone, not allowed), "Failed to create container namespace: ..." and
        its hint "A system administrator may need to enable user namespaces"; bubblewrap's "No
        permissions to create(ing) new namespace", "Creating new namespace failed, likely because
        the kernel does not support user namespaces", its ENOSPC form; rootless podman's and
        buildah's "user namespaces are not enabled in /proc/sys/..."; Charliecloud's "ch-run: can't
        init user+mount namespaces: Invalid argument (ch_core.c:381 22)", its errno decoded
        (EINVAL: none in the kernel or RHEL 7's switch off; EPERM: unprivileged ones not allowed;
        ENOSPC/EUSERS: max_user_namespaces 0 or spent); enroot's helpers' "failed to
        create user namespace: " with EPERM, ENOSPC or EINVAL; errors. bwrap's "setting up
        uid map: Permission denied" (Ubuntu 24.04's AppArmor restriction) is a warning. Live: the
        sysctls that turn them off (user.max_user_namespaces = 0, kernel.unprivileged_userns_clone
        = 0, kernel.apparmor_restrict_unprivileged_userns = 1), info.

    Why it matters:
        An unprivileged Apptainer (installed from conda-forge or with install-unprivileged.sh),
        bubblewrap (Flatpak, sandboxes), rootless podman and enroot all need a user namespace for
        every container; without one nothing runs. Where Apptainer's --fakeroot fails this way,
        this rule answers instead of apptainer-fakeroot-unavailable (one finding a line).

    How to fix:
        Administrators enable unprivileged user namespaces (user.max_user_namespaces above 0;
        kernel.unprivileged_userns_clone = 1 on Debian/Ubuntu kernels; an AppArmor profile that
        allows userns for the program on Ubuntu 24.04) or install a setuid Apptainer
        (apptainer-suid), which runs containers without one.

    References:
        - https://apptainer.org/docs/admin/main/user_namespace.html
        - https://github.com/apptainer/apptainer/blob/v1.5.3/cmd/starter/c/starter.c (nserror, CREATE_NAMESPACE)
        - https://github.com/containers/bubblewrap/blob/v0.11.1/bubblewrap.c
        - https://man7.org/linux/man-pages/man2/unshare.2.html (EINVAL, ENOSPC, EPERM for CLONE_NEWUSER)
        - https://ubuntu.com/blog/ubuntu-23-10-restricted-unprivileged-user-namespaces
        - https://github.com/apptainer/apptainer/issues/1562
        - https://github.com/hpc/charliecloud/blob/master/bin/ch_core.c (can't init user+mount namespaces)
        - https://github.com/NVIDIA/enroot/blob/v4.1.2/bin/enroot-nsenter.c (err: "failed to create user namespace")
    """
    told = [s for s in catalogued(f, USERNS) if _kernel_refusal(s)]
    stated = [s for s in told if s.get("id") not in (_HINT, _APPARMOR)]
    if told:
        s = (stated or told)[0]
        reason = s.get("reason") or s.get("file") or ""
        errno = _UNSHARE_ERRNO.get(str(s.get("errno") or ""))
        if errno:
            reason = f"errno {s.get('errno')}, {errno}"
        if stated:
            yield Hit(message=f"the kernel refused this user a user namespace (line {s.get('line')}: \"{told_text(s)}\")"
                              f"{f': {reason}' if reason and str(reason) not in told_text(s) else ''}; containers and "
                              "sandboxes that need one (Apptainer without setuid, bubblewrap, rootless podman) cannot run here",
                      fix=_USERNS_FIX, evidence=told_evidence(s))
        else:
            what = ("bubblewrap could not write its namespace's uid_map: the usual cause is AppArmor's restriction on "
                    "unprivileged user namespaces (Ubuntu 24.04)" if s.get("id") == _APPARMOR else
                    "Apptainer says a user namespace could not be created (its reason is on the next line, not in the paste)")
            yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {what}", fix=_USERNS_FIX,
                      evidence=told_evidence(s), severity="warning")
        return
    fr = f.get("containers.fakeroot") or {}
    userns, clone, aa = (fr.get("max_user_namespaces"), fr.get("unprivileged_userns_clone"),
                         fr.get("apparmor_restrict_unprivileged_userns"))
    said = [f"user.max_user_namespaces = {userns}" if userns == 0 and not isinstance(userns, bool) else "",
            "kernel.unprivileged_userns_clone = 0" if clone == 0 and not isinstance(clone, bool) else "",
            "kernel.apparmor_restrict_unprivileged_userns = 1" if aa == 1 and not isinstance(aa, bool) else ""]
    said = [x for x in said if x]
    if said:
        yield Hit(message=f"unprivileged user namespaces are off or restricted on this node ({', '.join(said)}): an "
                          "unprivileged Apptainer, bubblewrap or rootless podman cannot start containers here",
                  fix=_USERNS_FIX, severity="info",
                  evidence={"containers.fakeroot.max_user_namespaces": userns,
                            "containers.fakeroot.unprivileged_userns_clone": clone,
                            "containers.fakeroot.apparmor_restrict_unprivileged_userns": aa})


# ----------------------------------------------------------------------------------------------
# ENV058 xdg-runtime-dir-unavailable
XDG = "xdg-runtime-dir-unavailable"
_XDG_INFO = "xdg_runtime:qt-runtime-dir-not-set"
_XDG_FIX = (
    "echo \"XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-unset}\"; ls -ld \"/run/user/$(id -u)\"   # in the job, on the compute node: "
    "absent there, because no login session created it\n"
    "export XDG_RUNTIME_DIR=$(mktemp -d -p \"${TMPDIR:-/tmp}\" xdg-runtime-$(id -u)-XXXX)   # at the top of the job script "
    "(Open OnDemand: the desktop's script_wrapper or before-script); mktemp makes it 0700 and yours\n"
    "unset DBUS_SESSION_BUS_ADDRESS   # a bus address copied from the login node points into its /run/user too")


def _runtime_dir(s: dict) -> str:
    path = str(s.get("path") or "")
    return path.split("/dconf", 1)[0] if path.startswith("/run/user/") else (path or "that XDG_RUNTIME_DIR names")


@rule("ENV058", XDG, "warning", "the session's runtime directory (XDG_RUNTIME_DIR) is missing or not the user's", impact=4,
      also={"info": "XDG_RUNTIME_DIR unset, and Qt fell back to /tmp/runtime-<user>"})
def xdg_runtime_dir_unavailable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log: dconf's "unable to create directory '/run/user/<uid>/dconf': Permission
        denied. dconf will not work properly." (and its file form), Qt's "XDG_RUNTIME_DIR points
        to non-existing path" and "wrong ownership on runtime directory", warnings; Qt's
        "XDG_RUNTIME_DIR not set, defaulting to '/tmp/runtime-<user>'", info (Qt goes on); ble.sh's
        "XDG_RUNTIME_DIR='/run/user/<uid>' is not a directory." and "... doesn't have a proper
        permission.", which every shell it starts prints (an interactive job's shell first).

    Why it matters:
        /run/user/<uid> exists only while the user has a login session (pam_systemd); a batch job
        started by slurmd has none, so the directory is absent on the compute node while the
        XDG_RUNTIME_DIR copied from the login node still names it. Desktop sessions (MATE, XFCE),
        dconf, D-Bus, podman and enroot keep their sockets and state there and fail or misbehave.

    How to fix:
        Give the job a runtime directory of its own, 0700 and owned by the user, before the
        session starts (export XDG_RUNTIME_DIR=$(mktemp -d) in the job script or Open OnDemand's
        before-script), and do not pass the login node's.

    References:
        - https://specifications.freedesktop.org/basedir-spec/0.8/ (XDG_RUNTIME_DIR)
        - https://www.freedesktop.org/software/systemd/man/latest/pam_systemd.html ($XDG_RUNTIME_DIR)
        - https://gitlab.gnome.org/GNOME/dconf/-/blob/main/shm/dconf-shm.c
        - https://github.com/OSC/ood-ansible/issues/78
        - https://github.com/akinomyoga/ble.sh/blob/master/ble.pp (initialize-runtime-directory/.xdg)
    """
    told = catalogued(f, XDG)
    stated = [s for s in told if s.get("id") != _XDG_INFO]
    if stated:
        s = stated[0]
        yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the per-user runtime directory "
                          f"{_runtime_dir(s)} is missing on this node or not the user's; "
                          "a batch job has no login session to create /run/user/<uid>",
                  fix=_XDG_FIX, evidence=told_evidence(stated[0]))
    elif told:
        s = told[0]
        yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": XDG_RUNTIME_DIR is unset (no login session); "
                          "Qt went on with its own directory", fix=_XDG_FIX, evidence=told_evidence(s), severity="info")


# ----------------------------------------------------------------------------------------------
# ENV059 desktop-vnc-server-missing
VNC = "desktop-vnc-server-missing"
_VNC_FIX = (
    "command -v vncserver vncpasswd Xvnc; ls /opt/TurboVNC/bin 2>/dev/null   # on the compute node the desktop job ran on\n"
    "sudo dnf install tigervnc-server   # administrators, on every node of the desktop partition (apt: tigervnc-standalone-server; "
    "or TurboVNC from its own repository, then put /opt/TurboVNC/bin on PATH in the desktop's script)\n"
    "srun -p PARTITION --pty bash -lc 'command -v vncserver'   # check the partition the desktop app submits to")


@rule("ENV059", VNC, "error", "the VNC server a remote-desktop job starts is not on the node", impact=5)
def desktop_vnc_server_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted job log: the shell's "vncserver: command not found", "vncpasswd: command not
        found" or "Xvnc: command not found" (bash, dash, zsh and tcsh forms), as Open OnDemand's
        VNC template prints them in output.log when the desktop job starts on a node without a
        VNC server.

    Why it matters:
        An Open OnDemand (or other portal's) desktop session runs vncserver inside the batch job,
        on the compute node; without it the job ends at once and the session shows "Completed"
        with nothing to connect to.

    How to fix:
        Install TigerVNC or TurboVNC (and websockify) on every node the desktop app submits to,
        or put TurboVNC's bin directory on PATH in the app's script.

    References:
        - https://osc.github.io/ood-documentation/latest/enable-desktops.html
        - https://github.com/OSC/ood_core/blob/master/lib/ood_core/batch_connect/templates/vnc.rb
        - https://github.com/Azure/az-hop/issues/1925
    """
    told = catalogued(f, VNC)
    if told:
        s = told[0]
        cmd = s.get("command") or s.get("zcommand") or s.get("fcommand") or "vncserver"
        yield Hit(message=f"the job's node has no {cmd} (line {s.get('line')}: \"{told_text(s)}\"): the VNC server a "
                          "remote-desktop session starts is not installed there, or not on the job's PATH",
                  fix=_VNC_FIX, evidence=told_evidence(s))


# ----------------------------------------------------------------------------------------------
# ENV060 scheduler-env-not-loaded
SCHED_ENV = "scheduler-env-not-loaded"
_R_127 = "r_batch:r-system-error-in-running-command"
_R_BATCH = ("r_batch:r-cluster-functions-for-a-scheduler", "r_batch:future-batchtools-plan-for-a-scheduler")
_SCHED_FIX = (
    "Rscript -e \"Sys.which(c('sbatch', 'squeue', 'bsub', 'bjobs', 'qsub', 'qstat'))\"   # run from the RStudio terminal "
    "(or system() in the session that failed): an empty path is a command R cannot find\n"
    "bash -lc 'command -v sbatch squeue bsub bjobs qsub; echo $PATH'   # the same in a login shell, where R CMD BATCH works\n"
    "echo \"PATH=$(bash -lc 'echo $PATH')\" >> ~/.Renviron   # give R sessions the login shell's PATH (add LSF_ENVDIR=... "
    "for LSF), then restart the R session: RStudio Server reads ~/.Renviron, not ~/.bash_profile")


@rule("ENV060", SCHED_ENV, "error", "an R session cannot run the batch system's commands (its environment was not loaded)",
      impact=4, also={"warning": "R's 'error in running command' beside a batch package's scheduler cluster functions"})
def scheduler_env_not_loaded(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted R session: batchtools' "... failed (exit code 127); cmd: 'squeue ...'" (the
        scheduler command not found, batchtools' own check) and BatchJobs' "bsub produced exit
        code 127", errors; R's "error in running command" (system()/system2() whose shell exited
        127) beside BatchJobs' or batchtools' cluster functions for a scheduler
        (makeClusterFunctionsLSF(...), ...Slurm(...)) or future.batchtools' plan
        (batchtools_slurm), a warning: the usual cause, not shown, is the scheduler's commands
        missing from the R session's PATH.

    Why it matters:
        R started by RStudio (Server) or a desktop launcher reads no login-shell profile, so the
        PATH and scheduler variables the site sets there (LSF_ENVDIR, the Slurm bin directory, a
        module) are missing, while the same code run with R CMD BATCH from a login shell works.
        Every submission and status query then fails.

    How to fix:
        Compare Sys.which() and Sys.getenv('PATH') in the failing session with a login shell; add
        the scheduler's directory and variables to ~/.Renviron (or the site's Renviron.site) and
        restart the R session.

    References:
        - https://github.com/wch/r-source/blob/trunk/src/unix/sys-unix.c (do_system: status 127)
        - https://github.com/mlr-org/batchtools/blob/master/R/runOSCommand.R
        - https://stat.ethz.ch/R-manual/R-devel/library/base/html/Startup.html (.Renviron, Renviron.site)
        - https://github.com/tudo-r/BatchJobs/issues/73
    """
    told = catalogued(f, SCHED_ENV)
    if told:
        s = told[0]
        yield Hit(message=f"R could not find the scheduler command {s.get('command')} (line {s.get('line')}: "
                          f"\"{told_text(s)}\"): the R session's PATH lacks the batch system's directory",
                  fix=_SCHED_FIX, evidence=told_evidence(s))
        return
    found = f.get("ticket.symptoms") or []
    ran = next((s for s in found if s.get("id") == _R_127), None)
    batch = next((s for s in found if s.get("id") in _R_BATCH), None)
    if ran is None or batch is None:
        return
    which = batch.get("scheduler") or batch.get("plan") or "a scheduler"
    yield Hit(message=f"R could not run a command (line {ran.get('line')}: \"{told_text(ran)}\": the shell's status 127, "
                      f"not found) while driving {which} (line {batch.get('line')}: \"{told_text(batch)}\"): the usual "
                      "cause is the scheduler's commands missing from the R session's PATH (RStudio reads no login profile)",
              fix=_SCHED_FIX, evidence={**told_evidence(ran), "context.line": batch.get("line")}, severity="warning")


# ----------------------------------------------------------------------------------------------
# ENV061 rstudio-session-state-corrupt
RSTUDIO_STATE = "rstudio-session-state-corrupt"
_RSTUDIO_FIX = (
    "ls -la ~/.local/share/rstudio/sessions/active   # the session RStudio tries to restore (releases before 1.4: ~/.rstudio)\n"
    "mv ~/.local/share/rstudio ~/.local/share/rstudio.bak-$(date +%s)   # with the session stopped (from a terminal or "
    "ssh): RStudio starts with fresh per-user state; the project files are not touched")


@rule("ENV061", RSTUDIO_STATE, "info", "RStudio loads to a grey screen: its per-user session state is the usual cause", impact=3)
def rstudio_session_state_corrupt(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, the user's statement that RStudio loads to a grey or blank screen with
        no error. No message names the cause in the paste; the statement is quoted back at info
        with the documented first step.

    Why it matters:
        RStudio restores the last session from per-user state in the home directory
        (~/.local/share/rstudio); where that state is stale or damaged the IDE can load to an
        empty page on every browser and network, as the user's own data is not the problem.

    How to fix:
        Stop the session and move ~/.local/share/rstudio aside; RStudio starts with fresh state.

    References:
        - https://support.posit.co/hc/en-us/articles/200534577-Resetting-RStudio-s-State
        - https://github.com/berkeley-dsep-infra/datahub/issues/7981
    """
    s = first_stated(f, RSTUDIO_STATE)
    if s is not None:
        yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the usual cause is RStudio's per-user session state "
                          "in the home directory; move it aside", fix=_RSTUDIO_FIX, evidence=told_evidence(s))
