"""Environment modules (Lmod, and the Tcl Environment Modules): a `module load` that failed, read
from the messages a ticket pastes (knowledge/messages/lmod.toml, envmodules.toml, shell.toml). Every
fix names the module the message named, quoted for the shell."""

from __future__ import annotations

import re
import shlex
from typing import Iterator, List, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, shell_command, told_evidence, told_text

# Lmod quotes each name ("gcc/7.4.0", "a", "b"); older releases and the Tcl modules print them bare,
# separated by spaces (or " or " in Modules' requirement lists).
_QUOTED = re.compile(r'"([^"\s]{1,200})"')
_BARE = re.compile(r"[^\s\"',]{1,200}")


# A bare list is read from a window of joined lines: it ends at the first word that is no module name
# or that begins what the module command prints next (Lmod's traceback, Modules' next load block).
_MODULE_NAME = re.compile(r"[A-Za-z0-9_][\w.+-]{0,100}(?:/[\w.+-]{1,100}){0,4}")
_PRINTED_NEXT = frozenset({"While", "Please", "Lmod", "Loading", "Unloading", "Executing", "Also", "Try", "HINT:",
                           "ERROR:", "WARNING:"})


# Environment Modules prints these two as errors, or as warnings when --force loads the module anyway
# (report.tcl.in knerrorOrWarningIfForced, subcmd.tcl.in reportErrorOrWarningIfForced): only the error
# says the load was refused.
_FORCED_AS_WARNING = frozenset({"envmodules:requirement-not-loaded", "envmodules:conflict-unload-failed"})


def _refused(s: dict) -> bool:
    """Whether a catalogued module message says the load was refused: not one --force turned into a warning."""
    return not (s.get("id") in _FORCED_AS_WARNING and "WARNING" in str(s.get("text", "")))


def _names(text: str) -> List[str]:
    text = str(text or "")
    quoted = _QUOTED.findall(text)
    if quoted:
        return quoted[:8]
    names = []
    for w in _BARE.findall(text):
        if w in _PRINTED_NEXT or not _MODULE_NAME.fullmatch(w):
            break
        if w not in ("or", "and"):
            names.append(w)
    return names[:8]


def _base(name: str) -> str:
    """The name without its version, what `module spider` and `module avail` search for."""
    return name.split("/")[0] if not name.startswith("/") and "/" in name else name


def _q(names: List[str]) -> str:
    return " ".join(shlex.quote(n) for n in names)


@rule("ENV015", "module-unknown", "error", "module load names a module the module system does not have", impact=6,
      also={"info": "Environment Modules 3.2 says a modulefile being read asked for a module not on MODULEPATH: the module loaded was found; "
                    "or an Lmod name typed with the modulefile's .lua suffix"})
def module_unknown(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, the module system saying that no modulefile of the name asked for is on
        MODULEPATH: Lmod's "The following module(s) are unknown: ..." (e_Failed_Load), "Failed to
        find the following module(s): ... in your MODULEPATH" (e_Failed_2_Find_w_Access), "Unable
        to find: ..." and the load_any/depends_on_any failures; the Tcl Environment Modules'
        "ERROR: Unable to locate a modulefile for '...'" (3.2's ModuleCmd_Load.c(...):ERROR:105:
        too). Where 3.2 names a modulefile instead of its C file ("NAME(52):ERROR:105:"), the module
        asked for was found and it is NAME's own request for another module that failed: info, with
        NAME's line to read.

    Why it matters:
        Nothing the job needed from that module (a compiler, CUDA, an MPI, a Python) was put on
        PATH or LD_LIBRARY_PATH; the lines after it run against whatever the node has by default,
        and fail later with messages that point elsewhere. The usual causes: a misspelt name or a
        version the site no longer has (names are case-sensitive), or, under Lmod's software
        hierarchy, a module that becomes visible only after its compiler or MPI is loaded.

    How to fix:
        Lmod: module spider NAME lists every version the site has, across the hierarchy, and
        module spider NAME/VERSION what must be loaded first. Tcl modules: module avail NAME lists
        the versions on MODULEPATH. Then load a name exactly as listed. A module that Lmod lists
        but does not find may need module --ignore_cache load (a stale spider cache).

    References:
        - https://github.com/TACC/Lmod/blob/9.2.9/messageDir/en.lua (e_Failed_Load, e_Failed_2_Find_w_Access)
        - https://lmod.readthedocs.io/en/latest/135_module_spider.html
        - https://github.com/TACC/Lmod/issues/200 (zsh's completion adding .lua to module names)
        - https://github.com/cea-hpc/modules/blob/v5.5.0/tcl/modfind.tcl.in (Unable to locate a modulefile)
    """
    for s in catalogued(f, "module-unknown"):
        names = [s["module"]] if s.get("module") else _names(s.get("modules"))
        if not names:
            continue
        tcl = s.get("family") == "envmodules"
        name = names[0]
        asker = s.get("raised_in") or ""
        if tcl and asker and not asker.endswith(".c"):
            # 3.2 names the modulefile being read, and its line, when that modulefile asked for another
            # module (error.c PrintError); the module command's own lookup is named by its C file.
            yield Hit(severity="info",
                      message=f"the modulefile {asker} asks, on its line {s.get('raised_at')}, for module {name}, which is "
                              f"not on MODULEPATH (line {s.get('line')}: \"{told_text(s)}\"): {asker} itself was found and "
                              f"read; whether it needed {name} depends on that line",
                      fix=(f"module show {shlex.quote(asker)}   # line {s.get('raised_at')} names {name}: if the software "
                           f"needs it, ask the site to install {name} or correct the modulefile"),
                      evidence=told_evidence(s))
            return
        if tcl and name.startswith("/"):
            fix = ("module avail   # lists the modulefiles on MODULEPATH: module load takes one of those names, "
                   "or the path of a modulefile, not a software directory")
        elif tcl:
            fix = f"module avail {shlex.quote(_base(name))}   # the versions on MODULEPATH (names are case-sensitive); load one exactly as listed"
        else:
            fix = (f"module spider {shlex.quote(_base(name))}   # every version the site has and what must be loaded first; "
                   "then module load one exactly as listed")
        if not tcl and name.endswith(".lua") and len(name) > 4:
            # Lmod names a module by its modulefile's path without the .lua suffix (gcc/6.2.0.lua is
            # module gcc/6.2.0): a name typed with the suffix (a shell's file completion adds it,
            # TACC/Lmod#200) is the name's fault, not a missing module.
            bare = name[:-4]
            yield Hit(severity="info",
                      message=f"Lmod has no module {name} (line {s.get('line')}: \"{told_text(s)}\"): the name carries "
                              f"the modulefile's .lua suffix, which a module's name does not; the module is {bare}",
                      fix=(f"module load {shlex.quote(bare)}   # the name without .lua (a shell's file completion adds the "
                           "suffix where Lmod's own completion is not installed)"),
                      evidence=told_evidence(s))
            return
        tool = "Environment Modules" if tcl else "Lmod"
        yield Hit(message=f"{tool} has no module {name} on MODULEPATH (line {s.get('line')}: \"{told_text(s)}\"): "
                          "nothing the job needed from it was loaded",
                  fix=fix, evidence=told_evidence(s))
        return


@rule("ENV016", "module-not-loadable", "error", "a module that exists but needs other modules loaded first", impact=6,
      also={"info": "a prereq refusal whose modules the paste's module list shows loaded: the modulefile's prereq() names them otherwise"})
def module_not_loadable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, a module the site has that cannot be loaded as asked: Lmod's "These
        module(s) or extension(s) exist but cannot be loaded as requested" (e_Failed_Load_2: in the
        software hierarchy, not on the current MODULEPATH), "Cannot load module "X" without these
        module(s) loaded" and "At least one of these module(s) must be loaded" (prereq), "must be
        loaded with the version specified"; the Tcl Environment Modules' "Module cannot be loaded
        due to missing prereq" with its HINT, its "Requirement X is not loaded" (an error; the
        warning --force prints is not read), and 3.2's "depends on one of the module(s)".

    Why it matters:
        The module load failed, so the job runs without that software. The module is there: under
        a hierarchy (Lmod, EasyBuild and Spack trees) a library built with a compiler and an MPI
        appears only after both are loaded, and a modulefile's prereq stops the load until its
        dependencies are.

    How to fix:
        Lmod: module spider NAME/VERSION lists, line by line, the modules to load first (as the
        message itself says); load them, then the module, in one module load. Where the message
        names the prerequisites, load them first. Where the paste's own module list ("Currently
        Loaded Modules:") shows every module a prereq error names, nothing is missing: the
        modulefile's prereq() names them otherwise than Lmod knows them (info).

    References:
        - https://github.com/TACC/Lmod/blob/9.2.9/messageDir/en.lua (e_Failed_Load_2, e_Prereq, e_Prereq_Any, e_RequireFullName, m_Depend_Mods)
        - https://lmod.readthedocs.io/en/latest/080_hierarchy.html
        - https://lmod.readthedocs.io/en/latest/015_writing_modules.html (prereq)
        - https://github.com/TACC/Lmod/issues/719 (a prereq naming a loaded module otherwise: not a bug)
        - https://github.com/cea-hpc/modules/blob/v5.5.0/tcl/report.tcl.in (getErrPrereqMsg, getReqNotLoadedMsg, reportMissingPrereqError)
    """
    for s in filter(_refused, catalogued(f, "module-not-loadable")):
        key = s.get("key")
        module = s.get("module")
        names = _names(s.get("modules"))
        if key in ("e_Failed_Load_2", "e_RequireFullName"):
            target = (names or _names(module) or [""])[0]
            if not target:
                continue
            if key == "e_RequireFullName":
                target = _base(target)
            fix = (f"module spider {shlex.quote(target)}   # lists the modules to load first; then module load them and "
                   f"{target} in one command")
            said = f"the site has {target} but it cannot be loaded as asked"
        elif names and _all_loaded(f, names):
            yield _prereq_already_loaded(s, names, module)
            return
        elif names:
            first = names[:1] if key in ("e_Prereq_Any",) else names
            load = first + ([module] if module else [])
            fix = f"module load {_q(load)}"
            if key == "e_Prereq_Any" and len(names) > 1:
                fix += f"   # or any other one of: {' '.join(names[1:])}"
            elif not module:
                fix += "   # first; then load the module that failed"
            said = f"{module or 'the module'} needs {' '.join(names)} loaded first"
        else:
            continue
        yield Hit(message=f"{said} (line {s.get('line')}: \"{told_text(s)}\")", fix=fix, evidence=told_evidence(s))
        return


_LOADED_ITEM = re.compile(r"[0-9]{1,3}\)\s{1,4}([^\s]{1,200})")


def _all_loaded(f: FactView, names: List[str]) -> bool:
    """Whether the paste's `module list` (Lmod's "Currently Loaded Modules:") shows every module a
    prereq error names: then loading them is not the answer."""
    listed = next((t for t in f.get("ticket.symptoms") or [] if t.get("id") == "lmod:currLoadedMods"), None)
    if listed is None:
        return False
    loaded = {m.rstrip("()DLS<>") for m in _LOADED_ITEM.findall(str(listed.get("loaded") or ""))}
    return all(n in loaded for n in names)


def _prereq_already_loaded(s: dict, names: List[str], module: Optional[str]) -> Hit:
    """A prereq refusal naming modules the paste shows loaded: the modulefile's prereq() names them
    otherwise than Lmod knows the loaded ones (TACC/Lmod#719: not a bug), so there is nothing to load."""
    target = module or "the module"
    return Hit(message=(f"Lmod refused {target} for want of {' '.join(names)}, which the paste's module list shows "
                        f"loaded (line {s.get('line')}: \"{told_text(s)}\"): Lmod's prereq() matches the names it lists "
                        "against the loaded modules' names as Lmod splits them (name, or name/version); a prereq() "
                        "that names a loaded module another way never matches. Loading it again will not help: the "
                        "modulefile's prereq() line is what to check"),
               fix=("module -t list 2>&1   # the loaded modules exactly as Lmod names them\n"
                    + (f"module --raw show {shlex.quote(module)} 2>&1 | grep -n prereq   # what the modulefile's prereq() names; "
                       "it must name the module as listed above (or its name without the version)" if module else
                       "# the failing modulefile's prereq() must name the module as listed above (or its name without the version)")),
               evidence=told_evidence(s), severity="info")


@rule("ENV017", "module-conflict", "error", "a module load refused because a loaded module conflicts with it", impact=5)
def module_conflict(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, a module load refused over a conflict: Lmod's "Cannot load module "X"
        because these module(s) are loaded" (e_Conflict), "because this module set a conflict"
        (e_Conflict_Downstream), "You can only have one ... module loaded at a time"
        (e_Family_Conflict), "Your site prevents the automatic swapping of modules with same
        name" (e_No_AutoSwap); the Tcl Environment Modules' "Module cannot be loaded due to a
        conflict" with its HINT, its "Unload of conflicting X failed" (the automatic unload of the
        conflict failed; an error, not --force's warning), and 3.2's "conflicts with the currently
        loaded module(s)".

    Why it matters:
        The module was not loaded, so the job runs with the one already loaded (another compiler,
        MPI or CUDA) or without it; two CUDA or MPI stacks declare a conflict because mixing them
        breaks at run time.

    How to fix:
        Unload the conflicting module named in the message, then load the one wanted (or module
        swap OLD NEW).

    References:
        - https://github.com/TACC/Lmod/blob/9.2.9/messageDir/en.lua (e_Conflict, e_Conflict_Downstream, e_Family_Conflict, e_No_AutoSwap)
        - https://github.com/cea-hpc/modules/blob/v5.5.0/tcl/report.tcl.in (getErrConflictMsg, getHintUnFirstMsg, getErrConUnMsg; subcmd.tcl.in conun)
    """
    for s in filter(_refused, catalogued(f, "module-conflict")):
        names = _names(s.get("modules"))
        module = s.get("module")
        if names:
            fix = f"module unload {_q(names)}" + (f" && module load {shlex.quote(module)}" if module else
                                                   "   # then load the module that was refused")
        else:
            fix = "module list   # the loaded module that conflicts; module unload it, then load the one wanted"
        said = f"{module or 'the module'} was not loaded: it conflicts with {' '.join(names) or 'a loaded module'}"
        yield Hit(message=f"{said} (line {s.get('line')}: \"{told_text(s)}\")", fix=fix, evidence=told_evidence(s))
        return


@rule("ENV018", "module-command-missing", "error", "a script's shell has no module command", impact=6,
      also={"info": "read from the user's words (module does not work in a job script): the documented usual cause (Lmod FAQ)"})
def module_command_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, the shell's "module: command not found" (or "ml: command not found"),
        typically from a batch script ("/var/spool/slurmd/job.../slurm_script: line 4: module:
        command not found").

    Why it matters:
        module is a shell function that the site's initialisation defines (/etc/profile.d/*.sh for
        login shells; for bash scripts the file BASH_ENV names). A script started as #!/bin/sh, or a
        shell that reads neither, has no module command: every module line fails and the job runs
        without the software it meant to load. Lmod's documentation: scripts starting with
        #!/bin/sh "won't define the module command, even if sh is linked to bash".

    How to fix:
        Start the batch script with #!/bin/bash -l (a login shell reads /etc/profile and
        /etc/profile.d, where the site defines module), or source the site's initialisation before
        the first module line (. /etc/profile, or the site's lmod/modules init file).

    References:
        - https://github.com/TACC/Lmod/blob/9.2.9/docs/source/030_installing.rst (Bash Shell Scripts; Bash Script Note)
        - https://github.com/TACC/Lmod/issues/663 (#!/bin/sh to #!/bin/bash fixed module in a Slurm script)
        - https://github.com/cea-hpc/modules/blob/v5.5.0/doc/source/FAQ.rst
        - https://github.com/TACC/Lmod/blob/d4d27f9c0cfb22bead991304afcc47e4bb6b950d/docs/source/040_FAQ.rst
          (Why doesn't the module command work in shell scripts?)
    """
    told = catalogued(f, "module-command-missing")
    # The shell's own refusal states the fact; the user's words (faq_lmod) only describe the symptom,
    # whose one documented cause the Lmod FAQ gives: answered at info, and only where nothing printed it.
    printed = [s for s in told if not str(s.get("id", "")).startswith("faq_")]
    words = [s for s in told if str(s.get("id", "")).startswith("faq_")]
    if not printed and words:
        s = words[0]
        yield Hit(message=f"the user says the module command does not work in a script (line {s.get('line')}: "
                          f"\"{told_text(s)}\"): the usual cause (Lmod FAQ) is a script shell that never defined "
                          "module (a #!/bin/sh script, or BASH_ENV not naming Lmod's init/bash)",
                  fix="head -1 JOB_SCRIPT; echo \"$BASH_ENV\"; type module   # want #!/bin/bash, BASH_ENV naming "
                      "Lmod's init/bash, and module a function",
                  evidence=told_evidence(s), severity="info")
        return
    for s in printed:
        command = s.get("command") or "module"
        yield Hit(message=f"the shell has no {command} command (line {s.get('line')}: \"{told_text(s)}\"): it did not read "
                          "the site's module initialisation, so no module line ran",
                  fix="#!/bin/bash -l   # the batch script's first line, in place of #!/bin/sh: a login shell reads "
                      "/etc/profile.d, where the site defines module",
                  evidence=told_evidence(s))
        return


# Commands a package installs that its module's name does not spell: the console_scripts of the
# package's own wheel (torch 2.13.0 entry_points.txt: torchrun, torchfrtrace).
_PROVIDED_BY = {"torchrun": ("pytorch", "torch"), "torchfrtrace": ("pytorch", "torch")}
_NOT_FOUND = ("shell:command-not-found", "slurm:stepd-execve-failed")
# A module load that failed is module-unknown's, module-not-loadable's or module-conflict's, not this.
_LOAD_FAILED = ("lmod", "envmodules")


def _names_software(module: str, command: str) -> bool:
    """Whether a module's name names the software a command belongs to: the command's package (a wheel's
    console script), or the one name spelling the other (gromacs's gmx is not guessed)."""
    base, cmd = _base(module).lower(), command.lower()
    if base in _PROVIDED_BY.get(cmd, ()):
        return True
    return len(cmd) >= 3 and len(base) >= 3 and (cmd == base or cmd.startswith(base) or base.startswith(cmd))


@rule("ENV041", "site-module-missing-executable", "warning",
      "a loaded module that names the software does not put its command on PATH", impact=6)
def site_module_missing_executable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted job, a command the shell or Slurm could not find ("torchrun: command not
        found", slurmstepd's "execve(): torchrun: No such file or directory") after the script
        loaded a module whose name names that software ("module load pytorch/2.1"), and no module
        error: the load worked, and the module did not put the command on PATH.

    Why it matters:
        A site module sets PATH for the software it installs; one built without a launcher
        (torch's torchrun console script), or a container-wrapped module that exposes only some
        commands (python3, pip3), loads without a word and the job fails when it runs the command.
        slurmstepd leaves a command it finds on no PATH directory as its bare name, so execve()
        fails with ENOENT.

    How to fix:
        Ask the module what it puts on PATH (module show), run the command through the module's
        interpreter where it is a Python entry point (python3 -m torch.distributed.run for
        torchrun), or load the module version or site module that provides it; report the
        missing command to the site.

    References:
        - https://lmod.readthedocs.io/en/latest/010_user.html (module show, module spider)
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/slurmd/slurmstepd/task.c (exec_task)
        - https://docs.pytorch.org/docs/stable/elastic/run.html (torchrun is python -m torch.distributed.run)
        - https://github.com/CSCfi/pytorch-ddp-examples/issues/1
    """
    told = f.get("ticket.symptoms") or []
    if any(s.get("family") in _LOAD_FAILED for s in told):
        return
    loaded = [m for s in told if s.get("id") == "jobscript:module-load" for m in str(s.get("modules") or "").split()]
    if not loaded:
        return
    for s in told:
        cmd = shell_command(s) if s.get("id") in _NOT_FOUND else ""
        if not cmd or "/" in cmd:
            continue
        module = next((m for m in loaded if _names_software(m, cmd)), None)
        if module is None:
            continue
        run_as = (f"python3 -m torch.distributed.run   # what {cmd} runs, through the module's own python3\n"
                  if cmd == "torchrun" else "")
        yield Hit(message=f"{cmd} is on no directory of the job's PATH (line {s.get('line')}: \"{told_text(s)}\") although "
                          f"the script loads {module}, which names that software: the module does not provide {cmd}",
                  fix=(f"module load {module} && module show {module} 2>&1 | grep -iE 'PATH|singularity|apptainer'   "
                       f"# what it puts on PATH\nmodule load {module} && command -v {cmd} || echo '{cmd} not provided'\n"
                       f"{run_as}module spider {_base(module)}   # another version of the module that provides it; "
                       "else tell the site's support the command is missing"),
                  evidence={**told_evidence(s), "module": module})
        return


# ModuleCmd_Load.c's ErrorLogger(ERR_LOCATE) line in each 3.2 release (envmodules/modules branch c-3.2):
# 208 at 3.2.10 (be4809a9), 213 at 3.2.11, 3.2.12 and 3.2.13 (15c9b8bc, 96fbb2b1, 1f433b35).
_LOAD_LINE_RELEASE = {"208": "3.2.10", "213": "3.2.11 to 3.2.13"}
# Runs as printed in a bash or sh job script: module's own status is 0 on 3.2, so the wrapper reads
# what modulecmd printed (the 3.x prefix with an ERROR, FATAL or PANIC weight) and returns 1 on it.
_CHECKED = ("module_checked() { _e=$(mktemp); module \"$@\" 2>\"$_e\"; _r=$?; cat \"$_e\" >&2; "
            "if grep -qE '\\):(ERROR|FATAL|PANIC):[0-9]' \"$_e\"; then _r=1; fi; rm -f \"$_e\"; return $_r; }")


@rule("ENV134", "environment-modules-too-old", "warning",
      "Environment Modules 3.2: module returns 0 on errors, so a job script goes on after a failed load", impact=5,
      also={"info": "the 3.2 release read from its message, the paste showing no exit status of 0 after it"})
def environment_modules_too_old(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, a message of Environment Modules 3.2 (the C modulecmd) with its own
        prefix, "<file>(<line>):<WEIGHT>:<number>: " (ModuleCmd_Load.c(213):ERROR:105: Unable to
        locate a modulefile for 'fred'): error.c's PrintError format, which only 3.x prints.
        Modules 4.0 and later print "ERROR: ..." and Lmod "Lmod has detected the following
        error: ...", so neither is read here (knowledge/messages/envmodules3.toml).

    Why it matters:
        On 3.2 the module shell function is eval `modulecmd bash $*` (init/bash.in): its exit
        status is eval's, 0, whatever modulecmd found, so "module load X || exit 1" never exits
        and a job script runs on without the software it meant to load. Modules 4.0 made every
        module sub-command return a non-zero exit code on error (MIGRATING.rst: "whereas Modules
        v3.2 always returned zero exit code even if issue occurred"). The 3.2 line was developed
        until 3.2.10 (2012); 3.2.11 to 3.2.13 (2017 to 2020) were bug fixes that kept this.

    How to fix:
        The site: replace 3.2 with a maintained module tool, Environment Modules 5.x (its
        MIGRATING notes cover the 3.2 to 4 changes) or Lmod, as the site chooses. The user, now:
        define a wrapper in the job script that reads modulecmd's own error lines and returns 1 on
        them, and load through it with "|| exit 1". The error itself (a module not found, a
        conflict) is answered by its own rule (module-unknown, module-conflict).

    References:
        - https://github.com/envmodules/modules/blob/c-3.2/error.c (PrintError, TransTab)
        - https://github.com/envmodules/modules/blob/c-3.2/init/bash.in (module function)
        - https://github.com/envmodules/modules/blob/v4.0.0/MIGRATING.rst (Non-zero exit code in case of error)
        - https://github.com/envmodules/modules/issues/505 (the maintainer: 3.2, exit code fixed in 4.0)
    """
    for s in catalogued(f, "environment-modules-too-old"):
        raised_in, raised_at = str(s.get("raised_in") or ""), str(s.get("raised_at") or "")
        release = _LOAD_LINE_RELEASE.get(raised_at) if raised_in == "ModuleCmd_Load.c" else None
        which = f"Environment Modules {release}" if release else "Environment Modules 3.2"
        # the module name envmodules.toml's locate-modulefile entry read on the same line (module-unknown's)
        name = next((str(t.get("module") or "") for t in f.get("ticket.symptoms") or []
                     if t.get("id") == "envmodules:locate-modulefile" and t.get("line") == s.get("line")), "")
        use = (f"module_checked load {shlex.quote(name)} || exit 1" if name and not name.startswith("/") else
               "module_checked load NAME || exit 1   # each module line of the script, through the wrapper")
        # The release is a fact either way; it is the ticket's fault only where the paste shows the zero
        # status it causes (an `echo $?` answering 0 after the failed command): else a hint.
        zero = any(t.get("id") == "shell:echo-exit-status" and str(t.get("status")) == "0" and
                   int(t.get("line") or 0) > int(s.get("line") or 0) for t in f.get("ticket.symptoms") or [])
        yield Hit(severity="warning" if zero else "info",
                  message=(f"this module command is {which}, the C modulecmd (line {s.get('line')}: \"{told_text(s)}\": "
                           f"the \"{raised_in}({raised_at}):{s.get('weight')}:{s.get('code')}:\" prefix is 3.x's; 4.x and "
                           "5.x print \"ERROR: ...\"): on 3.2, module returns 0 even when the command failed, so a job "
                           "script cannot see a failed load and runs on without the software; Modules 4.0 made errors "
                           "return a non-zero exit status"),
                  fix=(f"{_CHECKED}\n{use}\n"
                       "# the site: replace Environment Modules 3.2 (developed to 3.2.10, 2012; last fix release 3.2.13, 2020) with Modules 5.x or Lmod"),
                  evidence=told_evidence(s))
        return
