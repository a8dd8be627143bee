"""systemd-logind killing a login's processes when the session ends (KillUserProcesses=yes,
knowledge/messages/logind.toml): tmux, screen and nohup'd programs started over SSH die at logout. In a
paste, read from the user's words (prose.toml) and a KillUserProcesses=yes shown beside them."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, stated, told_evidence, told_text

SYMBOL = "logind-kills-user-processes"
_SAID = "prose:session-programs-killed-at-logout"
_SET = "logind:kill-user-processes-yes"

_FIX = ("loginctl show-user \"$USER\" -p Linger; busctl get-property org.freedesktop.login1 /org/freedesktop/login1 "
        "org.freedesktop.login1.Manager KillUserProcesses   # what logind does now ('b true': it kills the session's processes)\n"
        "systemd-run --scope --user tmux new -s work   # start tmux in its own scope, outside the SSH session's\n"
        "loginctl enable-linger \"$USER\"   # keep the user's manager (and that scope) after the last session ends\n"
        "# administrators: KillUserProcesses=no in /etc/systemd/logind.conf (or a drop-in in /etc/systemd/logind.conf.d/), "
        "or list the users in KillExcludeUsers=; then systemctl restart systemd-logind")


@rule("SW081", SYMBOL, "warning", "systemd-logind kills tmux, screen and nohup'd programs at logout", impact=3,
      also={"info": "only the user's words (tmux or screen dying when the SSH session ends), or only the setting, are in the paste"})
def logind_kills_user_processes(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        On the node, outside a batch job (a login node, where users keep tmux and screen):
        systemd-logind running with KillUserProcesses=yes in force (logind.conf, its drop-ins, or
        the build's default that the shipped file shows commented), for a user it does not
        exclude (KillExcludeUsers=). In a pasted ticket, a user's statement that tmux, screen or a nohup'd program is killed
        when the SSH session ends or the user logs out, and a KillUserProcesses=yes shown
        (logind.conf, a drop-in, or the user naming it). Both together: a warning. The
        statement alone is an info: it is what KillUserProcesses=yes does, but a session
        timeout, the OOM killer or a site's reaper read the same; the setting alone is an info
        too.

    Why it matters:
        With KillUserProcesses=yes, logind terminates the session's scope at logout: tmux's
        and screen's servers and nohup'd programs started over SSH die with the connection,
        so long runs on login or interactive nodes are lost.

    How to fix:
        Start the program in its own scope (systemd-run --scope --user tmux) and enable
        lingering (loginctl enable-linger); administrators set KillUserProcesses=no or
        KillExcludeUsers= in logind.conf and restart systemd-logind.

    References:
        - https://www.freedesktop.org/software/systemd/man/latest/logind.conf.html (KillUserProcesses=, KillExcludeUsers=)
        - https://www.freedesktop.org/software/systemd/man/latest/loginctl.html (enable-linger)
        - https://www.freedesktop.org/software/systemd/man/latest/systemd-run.html (--scope --user)
        - https://github.com/tmux/tmux/issues/428 (tmux in its own scope survives KillUserProcesses=yes)
        - https://github.com/ltsp/community/issues/92
    """
    told = catalogued(f, SYMBOL)
    said = next((s for s in told if s.get("id") == _SAID and stated(s)), None)
    setting = next((s for s in told if s.get("id") == _SET), None)
    if said is None and setting is None:
        yield from _on_this_node(f)
        return
    first = said or setting
    if said is not None and setting is not None:
        yield Hit(message=f"line {said.get('line')}: \"{told_text(said)}\" with KillUserProcesses=yes (line {setting.get('line')}): "
                          "systemd-logind terminates the SSH session's processes, tmux's and screen's servers included, at logout",
                  fix=_FIX, evidence={**told_evidence(said), "setting": told_text(setting)})
        return
    what = ("the user says tmux, screen or a nohup'd program dies when the SSH session ends: what systemd-logind does with "
            "KillUserProcesses=yes (a session timeout or a site's process reaper read the same)" if said is not None else
            "KillUserProcesses=yes: systemd-logind will terminate every process a login started (tmux, screen, nohup) when "
            "the session ends")
    yield Hit(message=f"line {first.get('line')}: \"{told_text(first)}\": {what}", fix=_FIX,
              evidence=told_evidence(first), severity="info")


def _on_this_node(f: FactView) -> Iterator[Hit]:
    """KillUserProcesses=yes in force where users log in (checks/system.py reads logind.conf and its
    drop-ins); a batch job's processes are the scheduler's, not a login session's."""
    if f.get("system.logind.kill_user_processes") is not True or f.get("system.logind.running") is not True \
            or f.get("scheduler.in_job") is not False:
        return
    user = f.get("env.vars.USER") or f.get("env.vars.LOGNAME")
    if user and user in (f.get("system.logind.exclude_users") or []):
        return
    yield Hit(message=(f"systemd-logind runs here with KillUserProcesses=yes ({f.get('system.logind.set_in')}): tmux, "
                       "screen and nohup'd programs started over SSH are killed when the session ends"),
              fix=_FIX, evidence={"system.logind": {k: f.get(f"system.logind.{k}")
                                                    for k in ("kill_user_processes", "set_in", "exclude_users")}})
