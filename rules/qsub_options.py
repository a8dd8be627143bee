"""A job script or pipeline that passes one scheduler's qsub options to another scheduler's qsub:
read from the qsubs' own refusals (knowledge/messages/qsub_cli.toml) and the table of which option
belongs to which scheduler and how each qsub answers it (knowledge/qsub_options.toml)."""

from __future__ import annotations

import re
from typing import Iterator, List, Tuple

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, ticket_symptoms, told_evidence, told_text

SYMBOL = "qsub-options-for-other-scheduler"
_T = knowledge.load("qsub_options")
_SCHED = _T["scheduler"]
_OPTIONS = _T["option"]
_PBS_REFUSALS = ("qsub_cli:pbs-illegal-option-value", "qsub_cli:pbs-getopt-invalid-option")
_SGE_REFUSALS = ("qsub_cli:sge-invalid-option-argument", "qsub_cli:sge-unknown-resource")
_SHOWN = ("qsub_cli:qsub-command-line", "qsub_cli:sge-directive", "qsub_cli:pbs-directive")
# "[qsub: illegal -c value]" with no command line beside it: getopt's reading of Grid Engine's -cwd
# (-c "wd") is the one a PBS user's own -c does not give (a checkpoint spec is a word of TORQUE's
# checkpoint_strings or OpenPBS's c=, w=, n, s, u); other letters need the option shown.
_ALONE = {"c": "-cwd"}
_WHICH = ("qsub --version 2>&1 | head -2; qstat --version 2>&1 | head -1   # which qsub is installed: TORQUE prints "
          "'Version: ...', OpenPBS / PBS Pro 'pbs_version = ...'; Grid Engine's answers 'invalid option argument' "
          "(qstat -help | head -1 then names its release)")


def _option(name: str) -> dict:
    return next(o for o in _OPTIONS if o["option"] == name)


def _words(s: dict) -> List[str]:
    return str(s.get("args") or "").split()


def _shown_options(words: List[str], of: Tuple[str, ...]) -> List[str]:
    """The table's options of the schedulers ``of`` that a command line or directive shows."""
    out: List[str] = []
    for o in _OPTIONS:
        if o["of"] not in of:
            continue
        name = o["option"]
        if name.startswith("-l "):
            res = name[3:]
            hit = any(w == "-l" and i + 1 < len(words) and any(
                re.match(rf"{re.escape(res)}(?:=|$)", part) for part in re.split(r"[,:]", words[i + 1]))
                for i, w in enumerate(words)) or any(
                w.startswith("-l") and len(w) > 2 and re.match(rf"-l{re.escape(res)}(?:=|$)", w) for w in words)
        elif " " in name:   # "-j oe": the option with one of its values
            flag = name.split()[0]
            hit = any(w == flag and i + 1 < len(words) and words[i + 1] in o.get("values", []) for i, w in enumerate(words))
        elif o.get("values"):
            hit = any(w == name and i + 1 < len(words) and words[i + 1] in o["values"] for i, w in enumerate(words))
        else:
            hit = name in words
        if hit and name not in out:
            out.append(name)
    return out


def _pbs_answerer(f: FactView, refusal: dict) -> str:
    ids = ticket_symptoms(f)
    if refusal.get("bracket") or "qsub_cli:torque-usage" in ids:
        return "torque"
    if "qsub_cli:openpbs-usage" in ids:
        return "openpbs"
    return "pbs"


def _answers(o: dict, answerer: str, kind: str, flag: str) -> bool:
    said = f"{kind} -{flag}"
    keys = ("torque", "openpbs") if answerer == "pbs" else (answerer,)
    return any(o["answer"].get(k) == said for k in keys)


def _name(sid: str) -> str:
    return {"pbs": "a PBS qsub (TORQUE or OpenPBS / PBS Pro)"}.get(sid) or f"{_SCHED[sid]['name']}'s qsub"


def _of(o: dict) -> str:
    return {"torque": "PBS's (TORQUE's)", "openpbs": "OpenPBS's / PBS Pro's", "sge": "Grid Engine's"}[o["of"]]


def _equivalents(names: List[str], answerer: str) -> List[str]:
    keys = ("torque", "openpbs") if answerer == "pbs" else (answerer,)
    lines = []
    for n in names:
        o = _option(n)
        for k in keys:
            eq = o["equivalent"].get(k, "")
            who = _SCHED[k]["name"]
            lines.append(f"# {n} ({_of(o)} option: {o['means']}) -> {who}: {eq}" if eq
                         else f"# {n} ({_of(o)} option: {o['means']}) -> {who}: no equivalent; drop it")
    return lines


@rule("SYS057", SYMBOL, "error", "qsub was given another scheduler's options (Grid Engine's on PBS, or PBS's on Grid Engine)",
      impact=6, also={"warning": "TORQUE's or OpenPBS's '[qsub: illegal -c value]' with no command line beside it: the "
                                 "refusal getopt gives Grid Engine's -cwd, read without the option itself"})
def qsub_options_for_other_scheduler(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a qsub refusing its options in the way its parser refuses another
        scheduler's: TORQUE's or OpenPBS's / PBS Pro's "qsub: illegal -c value" (TORQUE in
        brackets, followed by its usage "usage: qsub [-a date_time] [-A account_string] [-b secs]"),
        "qsub: illegal -p value", glibc getopt's "qsub: invalid option -- 's'", where the letter is
        how getopt reads a Grid Engine word (-cwd is -c with the value "wd", -pe is -p "e", -sync
        has no -s); Grid Engine's 'qsub: invalid option argument "-W"' (or "-J", "-k", "-I",
        "-j oe") and qmaster's 'Unable to run job: unknown resource "nodes"' (select, ncpus, mem,
        walltime) for PBS's. The table knowledge/qsub_options.toml, read from each qsub's option
        parser, says which scheduler's option the refused one is and how each qsub answers it.
        A refusal other than "illegal -c" needs the option itself in the paste (a qsub command
        line, a #$ or #PBS directive) before the rule names it.

    Why it matters:
        Three batch systems ship a command called qsub, with different options. A pipeline or job
        script written for Grid Engine (hic-bench, PAIRADISE) run on a TORQUE or PBS Pro cluster is
        refused at its first Grid Engine word, or worse, silently misread (-hold_jid becomes -h,
        a held job); the user sees a usage text and no hint that the options are another
        scheduler's.

    How to fix:
        Find out which scheduler the cluster runs (qsub --version, qstat --version) and rewrite the
        options the pipeline passes (its cluster or submit settings, its #$ directives) in that
        scheduler's terms: -cwd -> TORQUE -d "$PWD" or cd "$PBS_O_WORKDIR", -pe smp N ->
        -l nodes=1:ppn=N (TORQUE) or -l select=1:ncpus=N (PBS Pro), -l h_vmem -> -l mem, -hold_jid
        -> -W depend=afterany:ID; the other way, -W depend -> -hold_jid, -J -> -t, -l nodes /
        select -> -pe, -l walltime -> -l h_rt.

    References:
        - https://github.com/adaptivecomputing/torque/blob/34ff845417cc0348dfe0a61a491e5e0f4adf6ef4/src/cmds/qsub_functions.c (GETOPT_ARGS, print_qsub_usage_exit, checkpoint_strings)
        - https://github.com/openpbs/openpbs/blob/cd7ab5edaf03dcac2f1cb9e2f42d75eb117d468a/src/cmds/qsub.c (process_opts, print_usage)
        - https://github.com/daimh/sge/blob/05d828f59b32c238936b362cdb89292d261a2b9f/source/common/parse_qsub.c (cull_parse_cmdline)
        - https://github.com/daimh/sge/blob/05d828f59b32c238936b362cdb89292d261a2b9f/doc/man/man1/submit.1
        - https://github.com/NYU-BFX/hic-bench/issues/2
        - https://github.com/Xinglab/PAIRADISE/issues/7
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    symptoms = f.get("ticket.symptoms") or []
    shown = [s for s in symptoms if s.get("id") in _SHOWN]
    for s in told:
        sid = s.get("id")
        if sid in _PBS_REFUSALS:
            answerer = _pbs_answerer(f, s)
            kind = "illegal" if sid.endswith("illegal-option-value") else "invalid option"
            flag = str(s.get("flag") or "")
            cands = [o["option"] for o in _OPTIONS if o["of"] == "sge" and _answers(o, answerer, kind, flag)]
            seen = [n for w in shown for n in _shown_options(_words(w), ("sge",)) if n in cands]
            if seen:
                names, guessed = list(dict.fromkeys(seen)), False
            elif not shown and kind == "illegal" and flag in _ALONE:
                names, guessed = [_ALONE[flag]], True
            else:
                continue
            o = _option(names[0])
            how = (f"getopt reads {names[0]} as -{flag} with the value \"{names[0][2:]}\""
                   if kind == "illegal" else f"getopt has no -{flag}, the first letter of {names[0]}")
            msg = (f"line {s.get('line')}: \"{told_text(s)}\": {_name(answerer)} refused "
                   f"{', '.join(names)}, {_of(o)} option{'s' if len(names) > 1 else ''} ({o['means']}): {how}; "
                   f"the job script or pipeline passes Grid Engine's qsub options to {_name(answerer)}")
            if guessed:
                msg += " (read from the refusal alone: no command line or #$ directive is pasted beside it)"
            fix = "\n".join([_WHICH, *_equivalents(names, answerer),
                             "grep -rnE '^#[$]|qsub .*-(cwd|pe|sync|hold_jid|now)( |$)' . 2>/dev/null | head -20   "
                             "# where the pipeline or its job scripts write Grid Engine options: rewrite them, or set the "
                             "pipeline's scheduler to the one this cluster runs"])
            yield Hit(message=msg, fix=fix, evidence=told_evidence(s), severity="warning" if guessed else "error")
            return
        if sid in _SGE_REFUSALS:
            names: List[str] = []
            if sid.endswith("unknown-resource"):
                res = str(s.get("resource") or "")
                names = [o["option"] for o in _OPTIONS if o["of"] != "sge" and o["option"] == f"-l {res}"]
            else:
                words = str(s.get("arg") or "").split()
                names = [n for n in _shown_options(words, ("torque", "openpbs"))
                         if _option(n)["answer"].get("sge") == "invalid option argument"]
            if not names:
                continue
            o = _option(names[0])
            msg = (f"line {s.get('line')}: \"{told_text(s)}\": Grid Engine's qsub refused {', '.join(names)}, "
                   f"{_of(o)} option ({o['means']}): the job script or pipeline passes PBS qsub options to Grid Engine")
            fix = "\n".join([_WHICH, *_equivalents(names, "sge"),
                             "qconf -spl; qconf -sc | head -40   # this cluster's parallel environments (for -pe) and the "
                             "resources -l may name",
                             "grep -rnE '^#PBS|qsub .*-(W|J|l (nodes|select|walltime))' . 2>/dev/null | head -20   # where the "
                             "pipeline or its job scripts write PBS options: rewrite them, or set the pipeline's scheduler to "
                             "Grid Engine"])
            yield Hit(message=msg, fix=fix, evidence=told_evidence(s))
            return
