"""One bench script's result as a JSON file: what was run, on which machine, when.

The documentation's measured tables are built from these files (docs/hooks.py), so a figure in
the docs is always one a script printed, with its machine and date beside it.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional


def _cpu_model() -> Optional[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "cpu model"):
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or None


def machine() -> Dict[str, Any]:
    """Where the figures were measured; `uname -a` as the shell prints it."""
    try:
        uname = subprocess.run(["uname", "-a"], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        uname = " ".join(platform.uname())
    return {
        "uname": uname,
        "cpu_model": _cpu_model(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_average": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None,
    }


def write(path: Optional[str], bench: str, command: List[str], results: Dict[str, Any]) -> None:
    """Write the result file when --json-out names one; the load average says how busy the
    machine was, since figures taken beside other work are slower than on an idle node."""
    if not path:
        return
    doc = {
        "bench": bench,
        "command": " ".join(command),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "results": results,
    }
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def invocation() -> List[str]:
    """The command line as typed, with the script path relative to the checkout."""
    script = os.path.relpath(sys.argv[0], Path(__file__).resolve().parent.parent)
    return ["python", script, *sys.argv[1:]]
