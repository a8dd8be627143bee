"""The job's environment variables that matter for performance and correctness.

The SysRoot already filtered them and replaced secret values (see envfilter); this check only
presents them, so the report and every rule see one consistent view.
"""

from __future__ import annotations

from typing import Any, Dict

from hpcdoctor.facts import Unknown
from hpcdoctor.sysroot import ReplaySysRoot, SysRoot

NAME = "env"
TIMEOUT = 1.0


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    if isinstance(root, ReplaySysRoot) and not root.has_environ():
        return {"env": {"vars": Unknown("the snapshot holds no environment")}}
    return {"env": {"vars": dict(sorted(root.environ().items()))}}
