"""logind-kills-user-processes on the node: systemd-logind's configuration read as logind.conf(5)
orders it (the main file, then drop-ins by name, /etc hiding the same name elsewhere; the last
assignment wins; the shipped file's commented line is the build's default). The main file is
Debian 12's as shipped (tests/fixtures/logind/README.md); the drop-ins are the one-line files an
administrator writes."""

from __future__ import annotations

import shutil
from pathlib import Path

from hpcdoctor import pipeline
from hpcdoctor.runner import Options
from hpcdoctor.sysroot import ReplaySysRoot
from rulekit import fired, run_rule, set_path

DEBIAN = Path(__file__).resolve().parents[1] / "fixtures" / "logind" / "debian12-systemd-252" / "logind.conf"
SYMBOL = "logind-kills-user-processes"


def _node(tmp_path, drop_ins=(), running=True, in_job=False, user="alice"):
    fs = tmp_path / "node" / "fs"
    (fs / "etc" / "systemd").mkdir(parents=True)
    shutil.copy(DEBIAN, fs / "etc" / "systemd" / "logind.conf")
    for folder, name, text in drop_ins:
        d = fs / folder.lstrip("/")
        d.mkdir(parents=True, exist_ok=True)
        (d / name).write_text(text, encoding="utf-8")
    if running:
        (fs / "run" / "systemd" / "users").mkdir(parents=True)
    g = pipeline.gather(ReplaySysRoot(tmp_path / "node"), Options())
    for path, value in (("scheduler.in_job", in_job), ("env.vars", {"USER": user})):
        set_path(g["facts"], path, value)
        g["unknown"].pop(path, None)
    return g


def test_debians_shipped_default_is_read_and_is_no(tmp_path):
    g = _node(tmp_path)
    logind = g["facts"]["system"]["logind"]
    assert logind["kill_user_processes"] is False and "commented" in logind["set_in"]
    assert logind["exclude_users"] == ["root"]
    assert not fired(SYMBOL, g)


def test_a_drop_in_turning_it_on_is_a_warning_on_a_login_node(tmp_path):
    g = _node(tmp_path, [("/etc/systemd/logind.conf.d", "50-kill.conf", "[Login]\nKillUserProcesses=yes\n")])
    (f,) = fired(SYMBOL, g)
    assert f.severity == "warning" and "/etc/systemd/logind.conf.d/50-kill.conf" in f.message
    assert "systemd-run --scope --user tmux" in f.fix


def test_later_drop_in_wins_and_etc_hides_the_same_name(tmp_path):
    g = _node(tmp_path, [("/usr/lib/systemd/logind.conf.d", "10-vendor.conf", "[Login]\nKillUserProcesses=yes\n"),
                         ("/etc/systemd/logind.conf.d", "10-vendor.conf", "[Login]\nKillUserProcesses=no\n")])
    assert g["facts"]["system"]["logind"]["kill_user_processes"] is False
    g = _node(tmp_path / "b", [("/etc/systemd/logind.conf.d", "10-a.conf", "[Login]\nKillUserProcesses=no\n"),
                               ("/run/systemd/logind.conf.d", "20-b.conf", "[Login]\nKillUserProcesses=yes\n")])
    assert g["facts"]["system"]["logind"]["kill_user_processes"] is True


def test_not_fired_for_an_excluded_user_in_a_job_or_without_logind(tmp_path):
    on = ("/etc/systemd/logind.conf.d", "50-kill.conf", "[Login]\nKillUserProcesses=yes\nKillExcludeUsers=root alice\n")
    assert not fired(SYMBOL, _node(tmp_path / "a", [on]))
    on = ("/etc/systemd/logind.conf.d", "50-kill.conf", "[Login]\nKillUserProcesses=yes\n")
    assert run_rule(SYMBOL, _node(tmp_path / "b", [on], in_job=True))[0] == []
    assert run_rule(SYMBOL, _node(tmp_path / "c", [on], running=False))[0] == []


def test_logind_running_is_unknown_where_run_systemd_was_not_recorded(tmp_path):
    # a snapshot that holds logind.conf but no /run/systemd (taken before it was read): not "not running"
    g = _node(tmp_path / "a", running=False)
    assert g["facts"]["system"]["logind"]["running"] is None and "/run/systemd" in g["unknown"]["system.logind.running"]
    g = _node(tmp_path / "b", [("/run/systemd/logind.conf.d", "20-b.conf", "[Login]\n")], running=False)
    assert g["facts"]["system"]["logind"]["running"] is False   # /run/systemd recorded, no users/ in it
    assert _node(tmp_path / "c")["facts"]["system"]["logind"]["running"] is True
