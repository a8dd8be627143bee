"""The batch system itself not set up on this host: its configuration file unreadable or broken
(knowledge/messages/sched_config.toml; LSF's lsf.conf texts in ls_errors.toml), a second copy of
one of its daemons refused because the first still runs (daemon_lock.toml), and its client commands
missing from PATH (sched_clients.toml)."""

from __future__ import annotations

import re
import shlex

from typing import Iterator, Optional, Tuple

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.knowledge import slurm_conf_keys
from hpcdoctor.rules._common import catalogued, ticket_symptoms, told_evidence, told_text

CONFIG = "scheduler-config-broken"
DAEMON = "batch-daemon-already-running"
CLIENTS = "scheduler-commands-not-installed"
LATER_KEY = "slurm-client-library-older-than-config"

# slurm_strerror(ESLURM_CONFIGLESS_DISABLED): slurmctld's answer to a configless fetch when slurm.conf
# lacks SlurmctldParameters=enable_configless (proc_req.c _slurm_rpc_config_request @ 284c3b95).
_CONFIGLESS_OFF = "slurm:ESLURM_CONFIGLESS_DISABLED"
# The line that says where the fault is comes before the fatal line that only says Slurm stopped.
_CONFIG_ORDER = (_CONFIGLESS_OFF, "sched_config:slurm-parse-error-in-file", "sched_config:slurm-include-failed",
                 "sched_config:slurm-unrecognized-key", "sched_config:slurm-parse-error-in-data",
                 "sched_config:slurm-cannot-stat-file", "sched_config:slurm-file-is-empty",
                 "sched_config:slurm-unable-to-read", "sched_config:slurm-no-slurmctldhost")
_CONFIGLESS = ("sched_config:slurm-could-not-establish-configuration-source", "sched_config:slurmd-failed-to-load-configs")

_SLURM_CONFIG_FIX = (
    "echo ${SLURM_CONF:-/etc/slurm/slurm.conf}; scontrol --version   # which file the commands read, and the Slurm version\n"
    "# users: you cannot mend this; send the administrators the file and line quoted above\n"
    "sudo sed -n 'LINE,+0p' /etc/slurm/slurm.conf   # administrators: the line named in the error (LINE), e.g. a key without =value\n"
    "SLURM_CONF=/etc/slurm/slurm.conf scontrol show config 2>&1 | head -3   # administrators, after mending (or on a copy): "
    "scontrol parses the file before it asks the controller, so a parse error is its first line\n"
    "sudo scontrol reconfigure   # administrators: once every node has the mended file (or restart slurmctld and the slurmds)")
_CONFIGLESS_FIX = (
    "ls -l /etc/slurm/slurm.conf; echo \"SLURM_CONF=$SLURM_CONF\"   # no file here and no SLURM_CONF: Slurm tried configless mode\n"
    "host -t SRV _slurmctld._tcp   # configless needs this DNS SRV record (or slurmd --conf-server HOST); none: it found no controller\n"
    "# users: on a login node this is the site's setup, not yours: tell the administrators; on a workstation, Slurm is not set up here at all")
_CONFIGLESS_OFF_FIX = (
    "ls -l /etc/slurm/slurm.conf; echo \"SLURM_CONF=$SLURM_CONF\"   # no file here: this host asked the controller for it (configless)\n"
    "# users: tell the administrators; administrators, on the controller:\n"
    "sudo grep -i '^SlurmctldParameters' /etc/slurm/slurm.conf   # enable_configless must be among them\n"
    "# then add enable_configless to SlurmctldParameters and restart slurmctld (or give this host a slurm.conf)")
_PBS_CONFIG_FIX = (
    "cat ${PBS_CONF_FILE:-/etc/pbs.conf}   # must set PBS_HOME, PBS_EXEC and PBS_SERVER (no colon in the host names)\n"
    "# users: tell the administrators, quoting the line; administrators: restore pbs.conf from a working node, then restart PBS (systemctl restart pbs)")
_LSF_CONFIG_FIX = (
    "echo \"LSF_ENVDIR=$LSF_ENVDIR\"; ls -l ${LSF_ENVDIR:-/etc}/lsf.conf   # the lsf.conf the commands read\n"
    "source /path/to/lsf/conf/profile.lsf   # the site's LSF profile sets LSF_ENVDIR and PATH; without it the commands find no lsf.conf\n"
    "# a present but wrong lsf.conf: tell the administrators, quoting the line (badmin ckconfig -v checks it)")


def _config_fix(said: dict) -> str:
    sid = str(said.get("id", ""))
    if sid.startswith("ls_errors:"):
        return _LSF_CONFIG_FIX
    if ":pbs-" in sid:
        return _PBS_CONFIG_FIX
    if sid == _CONFIGLESS_OFF:
        return _CONFIGLESS_OFF_FIX
    if sid in _CONFIGLESS:
        return _CONFIGLESS_FIX
    where = said.get("lineno")
    fix = _SLURM_CONFIG_FIX.replace("'LINE,+0p'", f"'{where}p'" if where else "'1,$p'")
    path = str(said.get("path") or "")
    # the file the line names (slurm.conf, or an Include'd or plugin file), shell-quoted, in place of the default
    if path.startswith("/") and path.endswith(".conf"):
        fix = fix.replace("/etc/slurm/slurm.conf", shlex.quote(path)).replace(
            f"echo ${{SLURM_CONF:-{shlex.quote(path)}}}", "echo ${SLURM_CONF:-/etc/slurm/slurm.conf}")
    return fix


@rule("ENV093", CONFIG, "error",
      "the batch system cannot read its configuration file (slurm.conf, pbs.conf, lsf.conf): none of its commands work",
      impact=7, also={"warning": "a SPANK plugin listed in plugstack.conf did not load and no line shows that the "
                                 "command stopped for it (an optional entry is skipped)"})
def scheduler_config_broken(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a batch system's command or daemon that stopped because its configuration
        could not be read: Slurm's "Parse error in file F line N: "..."", ""Include" failed in file
        F line N", "Parsing error at unrecognized key: K", "Parse error in data for key K",
        "s_p_parse_file: cannot stat file F", "... file "F" is empty", "... unable to read "F"",
        "No SlurmctldHost defined.", the fatal "Unable to process configuration file" that follows
        each, configless Slurm's "Could not establish a configuration source" and slurmd's
        "_establish_configuration: failed to load configs", slurmctld's refusal to serve its files,
        "ConfigLess mode is disabled in slurm configuration.", and "Could not open/read/parse
        cgroup.conf (acct_gather.conf, mpi.conf) file"; OpenPBS's "pbsconf error: pbs conf
        variables not found: ..." or "illegal value for: ...", "Could not load pbs configuration",
        "Failed to load pbs.conf file" and pbs_mom's "config file(s) parsing failed"; LSF's
        "Unable to open file lsf.conf" (LSE_LSFCONF), "Bad configuration environment, something
        missing in lsf.conf?" (LSE_BAD_ENV) and "Bad syntax in lsf.conf" (LSE_CONF_SYNTAX).
        An error: each line states that the file could not be read. Also Slurm's SPANK stack
        (knowledge/messages/slurm_spank.toml): a plugin plugstack.conf lists that did not load,
        "spank: x11.so: Plugin file not found" (before 22.05; "Dlopen of plugin file failed"
        since), "Incompatible plugin version", "Plugin access denied", and "spank: FILE:N: Failed
        to load plugin P. Aborting." or "spank: Failed to open FILE"; the prefix (sbatch, srun,
        salloc: the submitting host; slurmstepd: the compute node) says which host lacks it. An
        error where a line shows the command or step stopped (the "Aborting." line of a required
        entry, "Failed to initialize plugin stack"); a warning otherwise: an optional entry that
        does not load is skipped and the command goes on.

    Why it matters:
        Every command of the batch system reads the file first, so none works (sbatch, squeue,
        sinfo all stop), and a daemon that reads it does not start. It is usually an edit in
        progress (nodes being added) or a copy that did not reach every host.

    How to fix:
        Users cannot mend it: send the administrators the file and line quoted. Administrators
        read the line named (a key without a value, a misspelt key), check the file parses, push
        the same file to every node and reconfigure. Configless Slurm needs the _slurmctld._tcp
        DNS SRV record or --conf-server; LSF needs LSF_ENVDIR (the site's profile.lsf). A SPANK
        plugin that is not installed: install it on every host that reads plugstack.conf (built
        for the Slurm release there), or remove its line or mark it optional.

    References:
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/parse_config.c
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/read_config.c
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/fetch_config.c
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/slurmctld/proc_req.c (_slurm_rpc_config_request: ESLURM_CONFIGLESS_DISABLED)
        - https://slurm.schedmd.com/configless_slurm.html
        - https://slurm.schedmd.com/slurm.conf.html
        - https://slurm.schedmd.com/spank.html (plugstack.conf: required, optional, include)
        - https://github.com/SchedMD/slurm/blob/90ff1dd4058b3ec2df25306a3917650efa59537f/src/common/spank.c (_spank_stack_process_line: Failed to load plugin ... Aborting.)
        - https://github.com/SchedMD/slurm/blob/7d4666c7d539fb056399b898f1b82f2e2bb20bb1/src/common/plugin.c (plugin_strerror)
        - https://github.com/openpbs/openpbs/blob/cd7ab5edaf03dcac2f1cb9e2f42d75eb117d468a/src/lib/Libifl/pbs_loadconf.c
        - https://github.com/zjma/openlava/blob/69891d86a7172b7b50c5e35816bba2499977db18/lsf/lib/lib.err.c
    """
    told = catalogued(f, CONFIG)
    spank = [s for s in told if s.get("family") == _SPANK_FAMILY]
    told = [s for s in told if s.get("family") != _SPANK_FAMILY]
    if not told:
        if spank:
            yield _spank_hit(f, spank)
        return
    # A real key of a later Slurm than the reader's: slurm-client-library-older-than-config answers;
    # the file is not broken for the site's own commands.
    if _later_key(f) and all(s.get("id") in _PARSE_ONLY for s in told):
        return
    rank = {sid: i for i, sid in enumerate(_CONFIG_ORDER)}
    said = min(told, key=lambda s: (rank.get(s.get("id"), len(rank)), s.get("line") or 0))
    where = (f" ({said.get('path')} line {said.get('lineno')})" if said.get("path") and said.get("lineno")
             else f" ({said.get('path')})" if said.get("path") else "")
    what = ("found no configuration file and no controller to fetch one from (configless)"
            if said.get("id") in _CONFIGLESS else
            "has no configuration file and asked slurmctld for it (configless), which slurmctld refuses: its "
            "slurm.conf lacks SlurmctldParameters=enable_configless" if said.get("id") == _CONFIGLESS_OFF else
            f"cannot read its configuration{where}")
    dropped = _dropped_key(told)
    if dropped:
        what += (f" ({dropped['name']} is a key Slurm {dropped['removed']} dropped: the file was written for an older "
                 "Slurm than the one reading it; remove or replace that line, see the release's RELEASE_NOTES)")
    yield Hit(message=f"line {said.get('line')}: \"{told_text(said)}\": the batch system {what}, so none of its "
                      "commands or daemons that read it work. Users cannot mend this: send the administrators the "
                      "line quoted",
              fix=_config_fix(said), evidence=told_evidence(said))


_DAEMON_NAME = {
    "daemon_lock:pbs-mom-another-mom-running": ("pbs_mom", "PBS_HOME/mom_priv/mom.lock"),
    "daemon_lock:pbs-server-another-server-running": ("pbs_server", "PBS_HOME/server_priv/server.lock"),
    "daemon_lock:pbs-sched-another-scheduler-running": ("pbs_sched", "PBS_HOME/sched_priv/sched.lock"),
    "daemon_lock:pbs-comm-another-router-running": ("pbs_comm", "PBS_HOME/server_priv/comm.lock"),
    "daemon_lock:slurmd-listen-port-in-use": ("slurmd", "SlurmdPort (6818 by default)"),
    "daemon_lock:slurmctld-no-quick-restart": ("slurmctld", "SlurmctldPidFile"),
    "daemon_lock:slurm-pidfile-locked-by-another-pid": ("slurmd", "its pidfile"),
}


def _daemon_fix(name: str, port: object) -> str:
    if name.startswith("pbs_"):
        stop = "sudo /etc/init.d/pbs stop   # or systemctl stop pbs; a daemon that stays: sudo kill PID (kill -9 only if it ignores SIGTERM)\n"
        logs = f"sudo tail -50 $PBS_HOME/{'mom_logs' if name == 'pbs_mom' else 'server_logs'}/$(date +%Y%m%d)   # why the old one stayed (PBS_HOME from /etc/pbs.conf)\n"
        start = "sudo /etc/init.d/pbs start   # once, after none is left\n"
    else:
        stop = f"sudo systemctl stop {name}; pgrep -a {name}   # a copy started by hand is not the service's: sudo kill PID\n"
        logs = (f"sudo ss -ltnp 'sport = :{port}'   # which process holds the port\n" if port else
                f"sudo journalctl -u {name} -n 50   # why the old one stayed\n")
        start = f"sudo systemctl start {name}   # once, after none is left\n"
    return (f"pgrep -a {name}   # administrators, on that host: the copy already running (its PID and command line)\n"
            + logs + stop + start).rstrip("\n")


# Slurm's SPANK stack (knowledge/messages/slurm_spank.toml): a plugstack.conf entry that did not load.
_SPANK_FAMILY = "slurm_spank"
# Lines that say the stack was not built, so the command or step stopped (a required entry).
_SPANK_STOPPED = ("slurm_spank:spank-required-load-aborted", "slurm_spank:spank-open-failed",
                  "slurm_cli:spank-stack-failed", "slurmstepd:spank-task-failed")
_SPANK_CLIENTS = ("sbatch", "srun", "salloc", "scrun")
_SPANK_WHY = {
    "Plugin file not found": "is listed in plugstack.conf but not installed on {host}",
    "Dlopen of plugin file failed": "could not be loaded on {host}: not installed there (Slurm 22.05 and later say so "
                                    "this way), or a library it needs is missing (the dlopen line above says which)",
    "Plugin access denied": "is on {host} but this user cannot read it",
    "Incompatible plugin version": "on {host} was built for another Slurm release than the one installed there "
                                   "(SPANK plugins must be rebuilt after a Slurm upgrade)",
    "Plugin name/type/version symbol missing": "named in plugstack.conf on {host} is not a Slurm plugin",
    "Plugin init() callback failed": "loaded on {host} but its own init() failed",
}


def _spank_hit(f: FactView, spank: list) -> Hit:
    """A plugstack.conf entry that did not load: which plugin, on which host (the line's prefix), and whether
    a line shows that the command or step stopped for it (a required entry) or not (an optional one is skipped)."""
    ids = ticket_symptoms(f)
    stopped = any(i in ids for i in _SPANK_STOPPED)
    said = next((s for s in spank if s.get("message") in _SPANK_WHY), spank[0])
    prog = str(said.get("prog") or next((s.get("prog") for s in spank if s.get("prog")), "") or "")
    host = (f"the host where {prog} ran (the submitting or login node)" if prog in _SPANK_CLIENTS else
            f"the compute node ({prog} printed it)" if prog else "the host that printed it")
    path = str(said.get("path") or said.get("conf") or "")
    name = path.rsplit("/", 1)[-1] or "PLUGIN.so"
    if said.get("message") in _SPANK_WHY:
        what = f"the SPANK plugin {name} " + _SPANK_WHY[str(said.get("message"))].format(host=host)
    elif said.get("id") == "slurm_spank:spank-open-failed":
        what = f"the SPANK plugin stack's file {path} could not be opened on {host}"
    else:
        what = f"a required SPANK plugin ({name}) could not be loaded on {host}"
    then = ("; plugstack.conf marks it required (or the stack could not be read), so the command or step stopped"
            if stopped else
            "; no line here shows the command stopped: an optional entry is skipped and the command goes on, so it "
            "matters only if you need what the plugin gives (x11.so: srun --x11)")
    q = shlex.quote(name)
    fix = ("scontrol show config | grep -iE '^(PlugStackConfig|PluginDir) '   # the plugstack.conf and the plugin folder "
           "this host's Slurm reads\n"
           f"grep -rn -F {q} /etc/slurm/plugstack.conf /etc/slurm/plugstack.conf.d/ 2>/dev/null   # its entry: "
           "'required' stops the command when the plugin cannot load, 'optional' skips it\n"
           f"find / -xdev -name {q} -path '*slurm*' 2>/dev/null | head   # on {host.split(' (')[0]}: no copy, the plugin "
           "is not installed on this host\n")
    if said.get("message") == "Incompatible plugin version":
        fix += "scontrol --version   # the Slurm release the plugin must be rebuilt for\n"
    fix += ("# users: send the administrators this line and the host's name; administrators: install the plugin on every "
            "host that reads plugstack.conf (built for its Slurm release), or remove its line there (or mark it optional)")
    return Hit(message=f"line {said.get('line')}: \"{told_text(said)}\": {what}{then}", fix=fix,
               evidence=told_evidence(said), severity="error" if stopped else "warning")


# The lines a parse of a later release's key prints, and nothing else wrong with the file.
_PARSE_ONLY = ("sched_config:slurm-unrecognized-key", "sched_config:slurm-parse-error-in-file",
               "sched_config:slurm-unable-to-process-configuration-file")
_SLURM_COMMANDS = frozenset((
    "sinfo", "squeue", "sbatch", "srun", "salloc", "scontrol", "scancel", "sacct", "sacctmgr", "sreport", "sshare",
    "sprio", "sstat", "sattach", "sbcast", "strigger", "sdiag", "scrontab", "slurmd", "slurmctld", "slurmstepd",
    "slurmdbd", "slurmrestd"))
_PROGRAM = re.compile(r"^\s*(?:\[[^\]\n]{1,40}\]\s{0,3})?([A-Za-z][\w.+-]{0,60}): (?:error|fatal): ")


def _dropped_key(told: list) -> Optional[dict]:
    """The unrecognized key pasted where it is a key an earlier Slurm knew and a later one dropped
    (knowledge/slurm_conf_keys.toml): its table entry, else None."""
    said = next((s for s in told if s.get("id") == "sched_config:slurm-unrecognized-key" and s.get("conf_key")), None)
    entry = slurm_conf_keys.lookup(str(said["conf_key"])) if said else None
    return entry if entry and entry.get("removed") and not entry.get("known") else None


def _later_key(f: FactView) -> Optional[Tuple[dict, dict, str]]:
    """The unrecognized key pasted, where it is a real key (knowledge/slurm_conf_keys.toml) that a
    Slurm release after the oldest read added and none dropped: (its symptom, its table entry, the
    file). None for a key no release knows (misspelt), one every release read knows, or a dropped one."""
    told = catalogued(f, CONFIG)
    said = next((s for s in told if s.get("id") == "sched_config:slurm-unrecognized-key" and s.get("conf_key")), None)
    if said is None:
        return None
    path = next((str(s.get("path")) for s in told
                 if s.get("id") == "sched_config:slurm-parse-error-in-file" and s.get("path")), "")
    conf = next((c for c in ("cgroup.conf", "gres.conf") if path.endswith(c)), "slurm.conf")
    entry = slurm_conf_keys.lookup(str(said["conf_key"]), conf)
    if entry is None or not slurm_conf_keys.newer_than_oldest(entry):
        return None
    return said, entry, conf


@rule("ENV125", LATER_KEY, "error",
      "a program linked to an older Slurm library than the site's reads a slurm.conf key it does not know", impact=5)
def slurm_client_library_older_than_config(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, "_parse_next_key: Parsing error at unrecognized key: K" where K is a real
        key of slurm.conf (or cgroup.conf, gres.conf) that a later Slurm release added: the program
        that printed it (drmaa-run, a pyslurm script, an old sbatch, a container's Slurm) parses the
        site's configuration with an older libslurm than the one the file was written for. The
        release that added each key comes from Slurm's own parser tables read at every major tag
        14.11 .. 25.05 (knowledge/slurm_conf_keys.toml). A key no release knows (misspelt) stays
        with scheduler-config-broken.

    Why it matters:
        The site's own commands read the file without complaint; only this program fails (and
        often crashes after, "Unable to establish controller machine", a segfault). Editing
        slurm.conf is not the fix: the program must use the site's Slurm.

    How to fix:
        Find the libslurm the program loads (ldd), compare with scontrol --version, and rebuild or
        reinstall the program against the installed Slurm (slurm-drmaa: configure
        --with-slurm-inc and --with-slurm-lib naming the installed Slurm's headers and library;
        pyslurm: the release matching the site's Slurm), give a container the site's Slurm, or use
        the site's own commands.

    References:
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/parse_config.c (_parse_next_key)
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/read_config.c (slurm_conf_options)
        - https://slurm.schedmd.com/slurm.conf.html
        - https://github.com/natefoo/slurm-drmaa/issues/20
    """
    found = _later_key(f)
    if not found:
        return
    said, entry, conf = found
    key, since = entry["name"], entry["since"]
    m = _PROGRAM.match(str(said.get("text", "")))
    program = m.group(1) if m else ""
    who = f"{program}'s libslurm" if program else "the program's libslurm"
    if entry.get("since_tag"):
        when = f"since a maintenance release of Slurm {since} ({entry['since_tag']} knows it, {since}.0 does not)"
        older = "older than that release"
    else:
        prev = slurm_conf_keys.previous(since)
        when = f"since Slurm {since}"
        older = f"Slurm {prev} or earlier" if prev else f"older than {since}"
    if program in _SLURM_COMMANDS:
        fix = (f"{program} --version   # this node's Slurm, older than the file\n"
               "grep -i -E '^(SlurmctldHost|ControlMachine)' ${SLURM_CONF:-/etc/slurm/slurm.conf}   # the controller; "
               "its release: sinfo --version there\n"
               "# administrators: install the controller's Slurm release on this node (or in the container image), "
               "so that its commands know every key of the slurm.conf they read")
        yield Hit(message=f"line {said.get('line')}: \"{told_text(said)}\": {key} is a {conf} key {when}: this node's "
                          f"Slurm ({program}, {older}) is older than the {conf} it reads, which was written for a later "
                          "Slurm (a login node or container left at an older release than the controller)",
                  fix=fix, evidence=told_evidence(said))
        return
    fix = (f"ldd \"$(command -v {shlex.quote(program) if program else 'PROGRAM'})\" | grep -i slurm   # the libslurm it loads, and from where\n"
           if program else "") + (
        "scontrol --version   # the site's Slurm, whose commands read this file\n"
        "# rebuild or reinstall the program against the site's Slurm: slurm-drmaa's ./configure --with-slurm-inc=<the "
        "installed Slurm's include dir> --with-slurm-lib=<its lib dir, where libslurm.so is>; pyslurm: the release "
        "matching scontrol --version; a container: the site's Slurm release inside it, or the host's commands\n"
        "# or use the site's own commands (sbatch, srun, squeue) in place of the program")
    yield Hit(message=f"line {said.get('line')}: \"{told_text(said)}\": {key} is a {conf} key {when}: {who} is older "
                      f"than this {conf} ({older}). The site's own Slurm reads the file; the program was built "
                      "against (or loads) an older Slurm library, so it cannot parse the configuration",
              fix=fix, evidence=told_evidence(said))


@rule("ENV094", DAEMON, "error", "a batch daemon will not start: another copy of it already runs on this host", impact=5)
def batch_daemon_already_running(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a batch system's daemon that exits at start because another copy holds
        its lock or port: OpenPBS's and TORQUE's "pbs_mom: another mom running" (mom_priv/mom.lock
        held), "pbs_server: another server running", "pbs_sched: another scheduler running",
        "pbs_comm: another PBS comm router running at the same port"; slurmd's "Unable to bind
        listen port (N): Address already in use", slurmctld's "SlurmctldParameters=no_quick_restart
        set. Please shutdown your previous slurmctld ..." and Slurm's "pidfile locked by N but
        contains pid=M". An error: the line states the lock or port is held.

    Why it matters:
        The node's daemon is not the one just started: an old copy (hung on a job, a file system
        or its own shutdown, or started by hand outside the service) keeps running, with the old
        configuration, and a restart script reports failure. Jobs on that node keep failing or
        the node stays offline until one copy is left.

    How to fix:
        On that host find the running copy (pgrep -a pbs_mom), read its log for why it stayed,
        stop it (kill it only if it does not stop), and start the daemon once.

    References:
        - https://github.com/openpbs/openpbs/blob/cd7ab5edaf03dcac2f1cb9e2f42d75eb117d468a/src/resmom/mom_main.c (lock_file on mom.lock)
        - https://github.com/openpbs/openpbs/blob/cd7ab5edaf03dcac2f1cb9e2f42d75eb117d468a/src/server/pbsd_main.c (lock_out_ha)
        - https://github.com/openpbs/openpbs/issues/2517
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/slurmd/slurmd/slurmd.c (Unable to bind listen port)
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/slurmctld/controller.c (_kill_old_slurmctld)
        - https://slurm.schedmd.com/slurm.conf.html#OPT_no_quick_restart
    """
    told = catalogued(f, DAEMON)
    if not told:
        return
    said = told[0]
    name, lock = _DAEMON_NAME.get(str(said.get("id")), ("the daemon", "its lock"))
    if said.get("port"):
        lock = f"its listening port {said.get('port')} (SlurmdPort)"
    yield Hit(message=f"line {said.get('line')}: \"{told_text(said)}\": {name} did not start because another {name} "
                      f"already holds {lock} on this host: stop that one (find it with pgrep -a {name}), then start once",
              fix=_daemon_fix(name, said.get("port")), evidence=told_evidence(said))


_CLIENTS_FIX = (
    "command -v sbatch squeue qsub qstat bsub condor_submit flux   # which batch clients this shell can run (none: no batch client on PATH)\n"
    "hostname; module avail slurm 2>&1 | head   # a login node of the cluster? some sites put the clients in a module (module load slurm)\n"
    "ls /usr/bin/sbatch /opt/slurm/bin/sbatch /opt/pbs/bin/qsub 2>/dev/null   # installed but off PATH: add its directory to PATH\n"
    "# on a workstation or in a container without the batch system: submit from the cluster's login node, or run the work locally "
    "(Nextflow -profile local, rslurm submit = FALSE, submitit's LocalExecutor)")


@rule("ENV095", CLIENTS, "warning",
      "the batch system's client commands (sbatch, qsub, bsub, condor_submit) are not on this host's PATH", impact=5)
def scheduler_commands_not_installed(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a batch system's client command found on no directory of PATH: the
        shells' "sbatch: command not found" (bash), "sh: 1: squeue: not found" (dash), "command
        not found: qsub" (zsh), "Unknown command: bsub" (fish), "qstat: Command not found."
        (tcsh), for Slurm's, PBS's, Grid Engine's, LSF's, HTCondor's and Flux's clients; Python's
        "FileNotFoundError: [Errno 2] No such file or directory: 'sbatch'" (submitit,
        dask-jobqueue, workflow managers running them with subprocess); Java's "Cannot run program
        "sbatch" ...: error=2, No such file or directory" (Nextflow's executors); rslurm's "Cannot
        submit; no Slurm workload manager found". A warning: the line states the command is not on
        PATH, which is this host having no client (a workstation, a container without the batch
        system) or the client's directory or module not loaded; the line does not tell which.

    Why it matters:
        Nothing can be submitted or queried from this host; wrappers (rslurm, Nextflow, submitit)
        fail or only write the scripts. A program run on a compute node, in a container or from
        a desktop session often meets this although the login node has the commands.

    How to fix:
        Check which clients the shell can run; load the site's module or add the client's
        directory to PATH; otherwise submit from the cluster's login node or run the work locally.

    References:
        - https://git.savannah.gnu.org/cgit/bash.git/tree/execute_cmd.c?h=bash-5.2 (execute_disk_command: "%s: command not found")
        - https://docs.python.org/3/library/subprocess.html (FileNotFoundError when the program is not found)
        - https://github.com/earthlab/rslurm/blob/master/R/slurm_apply.R (the squeue check)
        - https://www.nextflow.io/docs/latest/executor.html
        - https://github.com/earthlab/rslurm/issues/32
    """
    told = catalogued(f, CLIENTS)
    if not told:
        return
    said = next((s for s in told if s.get("id") != "sched_clients:rslurm-no-slurm-workload-manager"), told[0])
    cmd = said.get("command") or said.get("dash") or said.get("zsh") or said.get("fish") or "squeue"
    yield Hit(message=f"line {said.get('line')}: \"{told_text(said)}\": the batch system's client {cmd} is on no "
                      "directory of PATH here: this host has no client of that batch system (a workstation, a "
                      "container), or its module or directory is not loaded; submit from a host that has it",
              fix=_CLIENTS_FIX, evidence=told_evidence(said))
