"""A site's modulefile that fails in Lua while the module command evaluates it
(knowledge/messages/lua_modulefile.toml): the module tree is broken at that file, which only the
site's administrators can change."""

from __future__ import annotations

import shlex
from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import first_symptom, told_evidence

SYMBOL = "site-modulefile-lua-error"


@rule("ENV142", SYMBOL, "error", "a site's modulefile fails with a Lua error when it is loaded", impact=5)
def site_modulefile_lua_error(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, the Lua interpreter's report of an error raised in a file under a
        modulefiles tree: "lua: /trinity/shared/lmod/lmod/modulefiles/counter/count:15: attempt to
        perform arithmetic on local 'a' (a nil value)", then Lua's "stack traceback:".

    Why it matters:
        Lmod runs modulefiles written in Lua. One that raises an error stops there: what it should
        set (PATH, LD_LIBRARY_PATH, the variables of the software) is missing, and a load that
        pulls it in, or a site hook run on every load (a usage counter), fails for every user.
        Reloading or rewording the load does not help: the file is the site's.

    How to fix:
        Show the failing lines and send them with the error to the site's administrators; until it
        is fixed, a module that does not pull that file in, or the software's paths set by hand.

    References:
        - https://www.lua.org/source/5.4/lua.c.html (l_message, msghandler)
        - https://www.lua.org/source/5.4/lauxlib.c.html (luaL_where, luaL_traceback)
        - https://lmod.readthedocs.io/en/latest/015_writing_modules.html (modulefiles in Lua)
        - https://github.com/ComputationalRadiationPhysics/picongpu/issues/3047 (a site's module-usage counter failing)
    """
    s = first_symptom(f, "lua_modulefile:modulefile-lua-error")
    if s is None:
        return
    path, line = str(s.get("file")), int(s.get("lineno") or 1)
    yield Hit(message=f"the site's modulefile {path} fails at line {line} with a Lua error (line {s.get('line')}: "
                      f"\"{str(s.get('error'))[:120]}\"): the module command stops evaluating it, so what it should set "
                      "is missing; the file is the site's, not the user's",
              fix=(f"sed -n '{max(1, line - 3)},{line + 3}p' {shlex.quote(path)}   # the failing lines of the site's modulefile\n"
                   "module -D load MODULE 2>&1 | tail -n 40   # Lmod's trace of the load: which modulefile runs it (MODULE: "
                   "the one you load)\n"
                   "# send the error line and these lines to the site's administrators: only they can change the file"),
              evidence=told_evidence(s))
