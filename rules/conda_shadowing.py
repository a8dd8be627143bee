"""A conda environment's copy of a system library loaded by a system program: a conda lib/ on
LD_LIBRARY_PATH comes before the system's folders for every program started from that shell
(knowledge/messages/ld_library_path.toml). Environment Modules 3.2's modulecmd, linked against the
system's libtcl8.5.so, then loads the libtcl8.5.so conda installs with Python's tkinter and fails."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import first_symptom, ticket_all, told_evidence, told_text

SYMBOL = "conda-lib-shadows-system-library"
_SET = "ld_library_path:conda-lib-on-ld-library-path"
_LDD = "ld_library_path:ldd-row-in-conda"
_TCL = "envmodules3:ERR_INIT_TCL"
# Only conda's own folders are taken out; the rest of the path stays as it was.
_FIX = ("echo \"$LD_LIBRARY_PATH\" | tr ':' '\\n'   # a conda environment's lib/ here comes before the system's "
        "libraries for every program, the module command too\n"
        "export LD_LIBRARY_PATH=\"$(printf %s \"$LD_LIBRARY_PATH\" | tr ':' '\\n' | grep -vE "
        "'/(ana|mini)conda[0-9]?/|/miniforge[0-9]?/|/mambaforge/|/\\.conda/' | paste -sd: -)\"   # the same path "
        "without conda's folders\n"
        "# conda activate ENV is enough for the environment's own programs (they find its lib/ through their RPATH); "
        "remove the export from ~/.bashrc or the job script")


@rule("ENV141", SYMBOL, "error",
      "a system program loads a conda environment's copy of a library it was not built with (LD_LIBRARY_PATH)", impact=6)
def conda_lib_shadows_system_library(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, Environment Modules 3.2's "init.c(556):ERROR:161: Cannot initialize
        TCL" (knowledge/messages/envmodules3.toml ERR_INIT_TCL) beside what says the module
        command loaded conda's Tcl: the user's own line putting a conda environment's lib/ on
        LD_LIBRARY_PATH ("export LD_LIBRARY_PATH=~/.conda/envs/caffe/lib:$LD_LIBRARY_PATH"), or
        ldd's row resolving libtcl into a conda prefix ("libtcl8.5.so =>
        /home/me/miniconda2/lib/libtcl8.5.so (0x...)"; knowledge/messages/ld_library_path.toml).

    Why it matters:
        LD_LIBRARY_PATH is searched before the system's folders by every program, not only by
        the environment's. A conda environment holds its own libtcl8.5.so (Python's tkinter
        brings Tcl/Tk), so modulecmd, built against the system's Tcl, loads conda's copy, whose
        Tcl_Init cannot set up the interpreter: every module command fails, and on Modules 3.2
        its exit status is still 0. The same shadowing breaks other system tools that share a
        library with conda (libstdc++, libcurl, libssl).

    How to fix:
        Take the conda folders out of LD_LIBRARY_PATH (and the export out of ~/.bashrc or the
        job script): conda activate is enough for the environment's own programs, which find
        its lib/ through their RPATH.

    References:
        - https://github.com/conda/conda/issues/4023 (ldd of modulecmd with and without the conda environment)
        - https://github.com/rcgsheffield/sheffield_hpc/issues/564 (the admins: conda's Tcl 8.5 against the module system's)
        - https://github.com/cea-hpc/modules/blob/6fb9dac9253dbdc95cdb400f7f4f777efd728119/init.c (Modules 3.2: Tcl_Init, ERR_INIT_TCL)
        - https://docs.conda.io/projects/conda/en/latest/user-guide/tasks/manage-environments.html
    """
    tcl = first_symptom(f, _TCL)
    if tcl is None:
        return
    conda = first_symptom(f, _SET) or next(
        (s for s in ticket_all(f, _LDD) if str(s.get("library") or "").startswith("libtcl")), None)
    if conda is None:
        return
    how = (f"LD_LIBRARY_PATH is set to a conda environment's lib/ (line {conda.get('line')}: \"{told_text(conda)[:120]}\")"
           if conda.get("id") == _SET else
           f"ldd shows the module command's {conda.get('library')} resolved into conda (line {conda.get('line')}: "
           f"{conda.get('path')})")
    yield Hit(message=f"the module command cannot start its Tcl interpreter (line {tcl.get('line')}: \"{told_text(tcl)}\") "
                      f"and {how}: modulecmd, built against the system's libtcl, loads the copy conda installs with "
                      "Python's tkinter, found first on LD_LIBRARY_PATH",
              fix=_FIX, evidence={**told_evidence(tcl), "conda.line": conda.get("line")})
