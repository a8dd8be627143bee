"""lspci and lshw readers against hostile input: a 16 MiB flood of device lines or display nodes,
and lines as long as a paste, cost linear time and one bounded report (mutations of the real pastes:
test_fuzz.py)."""

from __future__ import annotations

import time

from conftest import run_main
from hpcdoctor.parse import lshw, lspci
from hpcdoctor.triage.paste import recognise

def _flood(unit: str, size: int) -> str:
    return unit * (size // len(unit))


def test_device_line_flood_is_refused_by_the_parser_in_linear_time():
    line = "01:00.0 VGA compatible controller [0300]: NVIDIA Corporation GA102 [GeForce RTX 3080] [10de:2206] (rev a1)\n"
    t0 = time.monotonic()
    try:
        lspci.parse(_flood(line, 1 << 20))
    except ValueError as exc:
        assert "more than" in str(exc)
    small = time.monotonic() - t0
    t0 = time.monotonic()
    try:
        lspci.parse(_flood(line, 8 << 20))
    except ValueError:
        pass
    assert time.monotonic() - t0 < max(2.0, 20 * small)


def test_long_lines_cost_what_their_cap_allows():
    t0 = time.monotonic()
    for text in ("01:00.0 " + "a" * (4 << 20) + "\n", "01:00.0 VGA compatible controller: " + "[" * (4 << 20) + "\n",
                 "  *-display\n" + "       configuration: " + "x=" * (2 << 20) + "\n"):
        for mod in (lspci, lshw):
            try:
                mod.parse(text)
            except ValueError:
                pass
    assert time.monotonic() - t0 < 5


def test_16_mib_paste_of_gpus_and_display_nodes_is_one_bounded_report(tmp_path):
    block = ("3e:00.0 VGA compatible controller [0300]: NVIDIA Corporation GA102 [GeForce RTX 3080] [10de:2206] (rev a1)\n"
             "\tKernel driver in use: nouveau\n  *-display UNCLAIMED\n       vendor: NVIDIA Corporation\n")
    paste = tmp_path / "flood.txt"
    paste.write_text(_flood(block, 16 << 20))
    t0 = time.monotonic()
    rec = recognise(paste.read_text())
    assert len(rec.pieces) <= 64
    res = run_main("check", "--from", str(paste), "--format", "json", "--fail-on", "never")
    assert time.monotonic() - t0 < 120
    assert res.returncode in (0, 1, 2) and "Traceback" not in res.stderr
    assert len(res.stdout) < 2 << 20
