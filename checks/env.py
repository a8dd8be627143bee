"""The job's environment variables that matter for performance and correctness.

The SysRoot already filtered them and replaced secret values (see envfilter); this check only
presents them, so the report and every rule see one consistent view. A paste has no environment,
but vLLM's report lists the variables under some prefixes: those become env.vars with env.listed
saying which, and rules asking for any other variable are skipped (facts.ListedEnv).
"""

from __future__ import annotations

from typing import Any, Dict

from hpcdoctor import envfilter
from hpcdoctor.checks._report import listed_environ
from hpcdoctor.facts import Unknown
from hpcdoctor.sysroot import ReplaySysRoot, SysRoot

NAME = "env"
TIMEOUT = 1.0


def _listed(root: SysRoot) -> Any:
    listed = listed_environ(root)
    if listed is None:
        return None
    return {"vars": dict(sorted(envfilter.relevant(listed["vars"]).items())),
            "listed": {k: listed[k] for k in ("source", "prefixes", "hidden")}}


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    if isinstance(root, ReplaySysRoot) and not root.has_environ():
        listed = _listed(root)
        if listed:
            return {"env": listed}
        return {"env": {"vars": Unknown("the snapshot holds no environment")}}
    return {"env": {"vars": dict(sorted(root.environ().items()))}}
