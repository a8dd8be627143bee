"""The environment report a replay may hold (the loader skips _modules: this is not a check):
torch's ``collect_env`` (also vLLM's copy), else sglang's ``check_env``, recorded or pasted."""

from __future__ import annotations

from typing import Any, Dict, Tuple

from hpcdoctor.parse.collect_env import ARGV, SGLANG_ARGV, parse_collect_env
from hpcdoctor.sysroot import CmdResult, Missing, SysRoot


def environment_report(root: SysRoot) -> Tuple[CmdResult, Dict[str, Any]]:
    """The first report held, parsed, with the result it came from. Raises Missing when none is."""
    reasons = []
    for argv in (ARGV, SGLANG_ARGV):
        try:
            res = root.run(argv, timeout=60.0, live=False)
        except Missing as exc:
            reasons.append(str(exc))
            continue
        return res, parse_collect_env(res.stdout)
    raise Missing("; ".join(reasons))
