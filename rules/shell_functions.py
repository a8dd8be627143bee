"""Exported shell functions a child shell cannot import: bash's "error importing function definition"
for BASH_FUNC_module%% and its kin (knowledge/messages/bash_import.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "exported-module-function-breaks-shell"
# the functions Environment Modules (module, ml, _module_raw), Lmod (module, ml) and scl export
_MODULE_FUNCS = ("module", "ml", "_module_raw", "scl", "switchml")


@rule("ENV092", SYMBOL, "warning", "a shell cannot import a function exported in the environment (module, ml, scl)",
      impact=4, also={"info": "a function other than the module tools' own"})
def exported_module_function_breaks_shell(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, bash's "error importing function definition for `NAME'" (bash 5 names
        the function, bash 4.2/4.3 after the shellshock fixes the variable `BASH_FUNC_NAME'), in
        English and in bash's Italian, German, Spanish and French translations; the parser's
        "NAME: line 1: syntax error: unexpected end of file" comes just before it.

    Why it matters:
        Environment Modules and Lmod export their module and ml functions (scl exports scl) as
        BASH_FUNC_NAME%% variables so that child shells have them. A child whose bash reads
        another format (an older or differently patched bash, sh on some systems), or an
        environment value cut short, cannot parse them: every shell the program starts prints
        the error, and module is missing in it.

    How to fix:
        Find the exporting variables (env | grep BASH_FUNC_); start the program from a shell
        without them (env -u 'BASH_FUNC_module%%'), or unset -f module ml before starting it;
        administrators update or reinstall the module package so that its init matches the
        shells the nodes run.

    References:
        - https://github.com/bminor/bash/blob/637f5c8696a6adc9b4519f1cd74aa78492266b7f/variables.c (initialize_shell_variables)
        - https://modules.readthedocs.io/en/latest/module.html (the module function and its export)
        - https://github.com/AtomLinter/linter-pylama/issues/72
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    func = str(s.get("func") or "NAME")
    kind = ("the module function Environment Modules or Lmod exports" if func in ("module", "ml", "_module_raw", "switchml")
            else "the function scl exports" if func == "scl" else "an exported shell function")
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": a child shell could not parse {func}, {kind} in the "
                      "environment (BASH_FUNC_" f"{func}%%): that shell's bash reads another format (an older or "
                      "differently patched bash) or the value was cut short; every such shell prints this and runs without it",
              fix=("env | grep '^BASH_FUNC_'   # the functions this environment exports to child shells\n"
                   f"env -u 'BASH_FUNC_{func}%%' bash -c 'echo imported cleanly'   # a child without it (start the program the same way) (or: unset -f {func} in the shell that starts it)\n"
                   "bash --version; ls -l /bin/sh   # the shells that import it: the same bash as the exporting one?\n"
                   "# administrators: update or reinstall the environment-modules (or Lmod, scl-utils) package so its init matches the nodes' bash"),
              evidence={**told_evidence(s), "function": func},
              severity=None if func in _MODULE_FUNCS else "info")
