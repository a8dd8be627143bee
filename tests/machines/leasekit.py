"""What the tests of a GPU lease's recordings share: the acceptance script loaded as a module, a
recorded report's bench facts, and the check that the CUDA catalogues say what that node's
libraries printed for every code."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any, Dict, List

from conftest import ROOT
from hpcdoctor.knowledge import messages

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

LEASES = ROOT / "tests" / "fixtures" / "gpu_acceptance"


def acceptance():
    spec = importlib.util.spec_from_file_location("gpu_acceptance", ROOT / "bench" / "gpu_acceptance.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def bench_of(lease: Path, name: str) -> Dict[str, Any]:
    return json.loads((lease / name).read_text())["facts"]["bench"]


def catalogue_disagreements(lease: Path, side: str, family: str) -> List[Any]:
    """The codes whose name or message in `family`.toml differs from what the lease's libcudart
    (side "runtime") or libcuda ("driver") printed; asserts the node printed a full table."""
    live = json.loads((lease / "cuda_error_strings.json").read_text())[side]["codes"]
    with open(messages.MESSAGES_DIR / f"{family}.toml", "rb") as fh:
        entries = {e["code"]: e for e in tomllib.load(fh)["entry"] if "code" in e}
    assert len(live) > 100, len(live)
    return [(code, said) for code, said in live.items()
            if (entries.get(int(code)) or {}).get("key") != said["name"]
            or entries[int(code)].get("message") != said["message"]]
