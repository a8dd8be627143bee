"""user-namespaces-disabled, xdg-runtime-dir-unavailable and desktop-vnc-server-missing on set M's
tickets and on other public pastes of the same class (tests/fixtures/pastes/SOURCES.md), through the
real catalogue and the real paste path."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulekit import facts, fired, paste_facts, recorded_paste_facts
from hpcdoctor import pipeline
from hpcdoctor.runner import Options
from hpcdoctor.triage.messages import find_messages
from hpcdoctor.triage.paste import open_paste

M = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_m"


def _ticket(name: str):
    """Set M's paste through the real paste path, as recorded_paste_facts reads fixtures/pastes."""
    with open_paste([str(M / f"{name}.txt")]) as (root, _r, _n):
        return pipeline.gather(root, Options())


def _userns(**kw):
    base = {"apptainer": None, "fakeroot_command": None, "max_user_namespaces": 15000,
            "unprivileged_userns_clone": None, "apparmor_restrict_unprivileged_userns": None,
            "subuid": {"listed": False, "disabled": False, "count": 0, "usable": False}}
    base.update(kw)
    return facts("h100-kvm-1gpu", **{"containers.fakeroot": base})


# -- ENV057 user-namespaces-disabled ------------------------------------------------------------

def test_apptainer_without_setuid_refused_a_user_namespace_is_one_finding():
    gathered = _ticket("apptainer-1562-user-namespaces-disabled")
    (f,) = fired("user-namespaces-disabled", gathered)
    assert f.severity == "error" and "user namespace disabled" in f.message and "line 24" in f.message
    assert "max_user_namespaces" in f.fix and "apptainer-suid" in f.fix
    # the same line no longer makes the fake-root rule speak as well
    assert not fired("apptainer-fakeroot-unavailable", gathered)


def test_singularity_from_conda_in_another_thread():
    (f,) = fired("user-namespaces-disabled", recorded_paste_facts("singularity-1741-user-namespace-disabled-conda.txt"))
    assert f.severity == "error" and "user namespace disabled" in f.message


def test_every_catalogued_wording_fires():
    from hpcdoctor.knowledge import messages
    examples = [(fam.id, e.key, e.get("example")) for fam in messages.families() for e in fam.entries
                if "user-namespaces-disabled" in (e.get("rules") or []) and e.get("example")]
    assert len(examples) >= 8
    for fam, key, example in examples:
        (f,) = fired("user-namespaces-disabled", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(example + "\n")}))
        want = "warning" if key in ("bwrap-uid-map-denied", "admin-may-need-to-enable-user-namespaces") else "error"
        assert f.severity == want, (fam, key)


def test_silent_on_a_fakeroot_build_that_failed_for_another_reason():
    # the fakeroot command was there; the image lacked getopt: no namespace was refused
    assert not fired("user-namespaces-disabled", recorded_paste_facts("apptainer-3629-fakeroot-getopt-missing.txt"))
    assert not fired("user-namespaces-disabled", recorded_paste_facts("singularity-2244-nv-broken-3-0-0-healthy.txt"))


def test_live_sysctls():
    (f,) = fired("user-namespaces-disabled", _userns(max_user_namespaces=0))
    assert f.severity == "info" and "user.max_user_namespaces = 0" in f.message
    (f,) = fired("user-namespaces-disabled", _userns(unprivileged_userns_clone=0, apparmor_restrict_unprivileged_userns=1))
    assert "unprivileged_userns_clone = 0" in f.message and "apparmor_restrict_unprivileged_userns = 1" in f.message
    assert not fired("user-namespaces-disabled", _userns())
    assert not fired("user-namespaces-disabled", _userns(unprivileged_userns_clone=1, apparmor_restrict_unprivileged_userns=0))
    # with apptainer installed the fake-root rule leaves the sysctls to this one
    assert not fired("apptainer-fakeroot-unavailable", _userns(apptainer="/usr/bin/apptainer", max_user_namespaces=0))


# -- ENV058 xdg-runtime-dir-unavailable ---------------------------------------------------------

@pytest.mark.parametrize("gathered, path", [
    (lambda: _ticket("ood-ansible-78-xdg-runtime-dir-missing-in-batch-job"), "/run/user/20199891"),
    (lambda: recorded_paste_facts("xreader-213-dconf-run-user-permission-denied.txt"), "/run/user/1000"),
])
def test_dconf_cannot_use_the_runtime_directory(gathered, path):
    (f,) = fired("xdg-runtime-dir-unavailable", gathered())
    assert f.severity == "warning" and path in f.message and "XDG_RUNTIME_DIR" in f.fix


def test_qt_falling_back_is_only_info():
    # qt/qtbase qstandardpaths_unix.cpp's format (xdg_runtime.toml's source)
    text = "QStandardPaths: XDG_RUNTIME_DIR not set, defaulting to '/tmp/runtime-root'\n"
    (f,) = fired("xdg-runtime-dir-unavailable", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
    assert f.severity == "info"


def test_silent_on_dconf_under_a_home_directory():
    assert not fired("xdg-runtime-dir-unavailable", recorded_paste_facts("openmeetings-docker-36-dconf-home-cache-nonexistent.txt"))


# -- ENV059 desktop-vnc-server-missing ----------------------------------------------------------

@pytest.mark.parametrize("gathered, cmd", [
    (lambda: _ticket("az-hop-1925-vnc-server-not-installed-on-node"), "vncpasswd"),
    (lambda: recorded_paste_facts("hpc-toolset-tutorial-17-ood-desktop-vncserver-missing.txt"), "vncpasswd"),
])
def test_the_desktop_job_found_no_vnc_server(gathered, cmd):
    (f,) = fired("desktop-vnc-server-missing", gathered())
    assert f.severity == "error" and f"no {cmd}" in f.message and "tigervnc" in f.fix


def test_silent_where_vncserver_runs():
    # a working vncserver talked about (the paste alone is refused: nothing in it is a message)
    from rulekit import PASTES
    text = (PASTES / "computecanada-software-stack-48-vncserver-display-tmp.txt").read_text()
    assert "vncserver" in text
    assert not fired("desktop-vnc-server-missing", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))


def test_every_shells_words_for_the_missing_vncserver():
    # recorded on the development VM, 2026-11-26: env PATH=/nonexistent <shell> -c vncserver (bash 5.2.15,
    # dash 0.5.12, zsh 5.9, fish 3.6.0, tcsh 6.24.07), and dash running a script whose second line is vncserver
    for text in ("/usr/bin/bash: line 1: vncserver: command not found\n", "/usr/bin/dash: 1: vncserver: not found\n",
                 "/tmp/desk.sh: 2: vncserver: not found\n", "zsh:1: command not found: vncserver\n",
                 "fish: Unknown command: vncserver\n", "vncserver: Command not found.\n"):
        (f,) = fired("desktop-vnc-server-missing", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
        assert "no vncserver" in f.message, text


# -- ENV060 scheduler-env-not-loaded ------------------------------------------------------------

def test_batchtools_found_no_squeue_is_an_error():
    (f,) = fired("scheduler-env-not-loaded", recorded_paste_facts("batchtools-230-squeue-command-not-found.txt"))
    assert f.severity == "error" and "squeue" in f.message and ".Renviron" in f.fix


@pytest.mark.parametrize("gathered, which", [
    (lambda: _ticket("batchjobs-73-scheduler-env-missing-in-rstudio"), "LSF"),
    (lambda: recorded_paste_facts("future-batchtools-93-error-in-running-command-slurm.txt"), "slurm"),
])
def test_r_could_not_run_a_command_while_driving_a_scheduler(gathered, which):
    (f,) = fired("scheduler-env-not-loaded", gathered())
    assert f.severity == "warning" and f"driving {which}" in f.message and "status 127" in f.message


def test_silent_on_the_same_code_before_it_failed():
    # set M's ticket without its error lines: the cluster functions alone say nothing is wrong
    text = (M / "batchjobs-73-scheduler-env-missing-in-rstudio.txt").read_text()
    code = text[text.index("Details:"):]
    assert "makeClusterFunctionsLSF(" in code and "error in running command" not in code
    assert not fired("scheduler-env-not-loaded", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(code)}))


# -- ENV061 rstudio-session-state-corrupt -------------------------------------------------------

def test_rstudio_loading_to_a_grey_screen_is_a_hint():
    (f,) = fired("rstudio-session-state-corrupt", _ticket("datahub-7981-stale-rstudio-session-state"))
    assert f.severity == "info" and "~/.local/share/rstudio" in f.fix
    (f,) = fired("rstudio-session-state-corrupt", recorded_paste_facts("rocker-versioned2-107-rstudio-server-blank-page.txt"))
    assert f.severity == "info" and "blank page" in f.message


def test_silent_on_a_greyed_out_shiny_window():
    from rulekit import PASTES
    text = (PASTES / "shiny-2053-rstudio-server-window-greyed-out.txt").read_text()
    assert not fired("rstudio-session-state-corrupt", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))


@pytest.mark.parametrize("paste, errno", [
    ("nextflow-2531-max-user-namespaces-too-low.txt", "errno 22, EINVAL"),
    ("charliecloud-133-userns-eperm.txt", "errno 1, EPERM"),
])
def test_charliecloud_refused_a_user_namespace_with_its_errno_decoded(paste, errno):
    (f,) = fired("user-namespaces-disabled", recorded_paste_facts(paste))
    assert f.severity == "error" and "can't init user+mount namespaces" in f.message and errno in f.message
    assert "max_user_namespaces" in f.fix


def test_enroot_helpers_kernel_refusal_under_pyxis_is_the_error():
    # enroot-nsenter's err(3) with unshare(CLONE_NEWUSER)'s EINVAL, printed through pyxis (CentOS 7 VMs)
    (f,) = fired("user-namespaces-disabled", recorded_paste_facts("enroot-41-nsenter-userns-invalid-argument-centos7.txt"))
    assert f.severity == "error" and "failed to create user namespace: Invalid argument" in f.message
    assert f.evidence["message"] == "enroot:enroot-helper-user-namespace" and "max_user_namespaces" in f.fix


def test_enroot_helpers_permission_denied_with_the_switches_on_is_not_read():
    # EACCES with user.max_user_namespaces 15000 and unprivileged_userns_clone 1 in the same paste
    assert fired("user-namespaces-disabled",
                 recorded_paste_facts("enroot-247-nsenter-userns-permission-denied-switches-on.txt")) == []


def test_blesh_runtime_dir_from_the_login_node_on_a_compute_node():
    # akinomyoga/ble.sh#556: an interactive shell on a Slurm compute node; /run/user/<uid> exists on
    # the login node only
    (f,) = fired("xdg-runtime-dir-unavailable",
                 recorded_paste_facts("../tickets_blind_y/ble-sh-556-xdg-runtime-dir-missing-on-compute-node.txt"))
    assert f.severity == "warning" and "/run/user/17238" in f.message
    assert "export XDG_RUNTIME_DIR=$(mktemp -d" in f.fix


def test_blesh_runtime_dir_owned_by_someone_else_is_read_too(tmp_path):
    (f,) = fired("xdg-runtime-dir-unavailable",
                 paste_facts(tmp_path, "ble.sh: XDG_RUNTIME_DIR='/run/user/1000' doesn't have a proper permission.\n"))
    assert "/run/user/1000" in f.message
