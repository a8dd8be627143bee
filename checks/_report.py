"""The environment report a replay may hold (the loader skips _modules: this is not a check):
torch's ``collect_env`` (also vLLM's copy), else sglang's ``check_env``, recorded or pasted; and
the environment variables a pasted vLLM report listed."""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

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


def listed_environ(root: SysRoot) -> Optional[Dict[str, Any]]:
    """{"vars", "prefixes", "hidden", "source"} of the variables a pasted report listed, or None."""
    try:
        data = root.probe("env_listed", dict)
    except Missing:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("vars"), dict) \
            or not isinstance(data.get("prefixes"), list) or not (data["prefixes"] or data["vars"]):
        return None
    return {"vars": {str(k): str(v) for k, v in data["vars"].items()}, "source": str(data.get("source")),
            "prefixes": [str(p) for p in data["prefixes"]], "hidden": [str(h) for h in data.get("hidden") or ()]}
