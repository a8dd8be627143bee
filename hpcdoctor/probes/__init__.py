"""Live API probes with no text source (NVML, amdsmi). Each returns JSON-serialisable data that
a snapshot stores under probes/ and replays; fields that could not be read hold an
``{"__unknown__": reason}`` marker that ``revive`` turns into Unknown."""

from __future__ import annotations

from typing import Any

from hpcdoctor.facts import Unknown

UNKNOWN_KEY = "__unknown__"


def marker(reason: str) -> dict:
    return {UNKNOWN_KEY: reason}


def revive(data: Any) -> Any:
    if isinstance(data, dict):
        if set(data) == {UNKNOWN_KEY}:
            return Unknown(str(data[UNKNOWN_KEY]))
        return {k: revive(v) for k, v in data.items()}
    if isinstance(data, list):
        return [revive(v) for v in data]
    return data
