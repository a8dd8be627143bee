"""The clock a paste is read against: reading is pure Python holding the interpreter, so it
counts against --budget and checks the clock as it goes."""

from __future__ import annotations

import time
from typing import Optional

from hpcdoctor.sysroot import SnapshotError

class PasteOverBudget(SnapshotError):
    pass


def _in_time(deadline: Optional[float], what: str) -> None:
    """Reading a paste is pure Python holding the interpreter: it counts against --budget and
    checks the clock as it goes, rather than being stopped from outside."""
    if deadline is not None and time.monotonic() > deadline:
        raise PasteOverBudget(f"reading the paste did not finish within the budget ({what}); "
                              "paste less, or give a larger --budget")
