"""An NVIDIA Jetson running a power mode below MAXN: nvpmodel caps the CPU, GPU and memory clocks
(and the online cores) to a power budget, so models run slower than the figures published for the
board. Read from nvpmodel's own report (knowledge/messages/jetson.toml), and, as the usual cause,
from a user's words that a Jetson runs slower than expected (prose.toml)."""

from __future__ import annotations

from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, first_symptom, stated, told_evidence, told_text

SYMBOL = "jetson-power-mode-capped"
_SLOW_SAID = ("prose:slower-than-reference-said", "prose:speed-is-slow-said", "prose:only-n-fps-said")
_FIX = ("sudo nvpmodel -q   # the power mode now: NV Power Mode: <NAME>, its ID on the next line\n"
        "grep -n 'POWER_MODEL' /etc/nvpmodel.conf   # this board's modes, ID and NAME: MAXN is the uncapped one\n"
        "sudo nvpmodel -m MAXN_ID   # the ID of MAXN from the line above (it differs between boards and releases; "
        "some boards ask to reboot)\n"
        "sudo jetson_clocks   # then pin the clocks at the mode's maximum for a benchmark (sudo jetson_clocks --show "
        "lists them)")


def _capped(f: FactView) -> Optional[dict]:
    return next((s for s in catalogued(f, SYMBOL)
                 if s.get("mode") and "MAXN" not in str(s["mode"]).upper()), None)


@rule("GPU032", SYMBOL, "warning", "the Jetson runs a power mode below MAXN: its clocks are capped", impact=5,
      also={"info": "a user's words that a Jetson runs slower than expected: the usual cause, to confirm"})
def jetson_power_mode_capped(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, nvpmodel's report of a power mode other than MAXN ("NV Power Mode:
        MODE_30W", "NV Power Mode: 15W"). As info, a paste that names an NVIDIA Jetson (Orin,
        Xavier, Nano, TX2) and says the model runs slower than the author's or a benchmark's
        figures ("slower than yours", "inference speed is slow", "0.9 FPS only"): the power mode
        is the usual cause NVIDIA's guide gives, and nvpmodel -q confirms it. On a Jetson itself
        (/etc/nvpmodel.conf present), nvpmodel -q's mode (checks/vendor_loaders.py).

    Why it matters:
        A Jetson's power modes trade speed for a power budget: every mode but MAXN lowers the
        maximum CPU, GPU and memory clocks and may take CPU cores offline, and the default mode
        of many boards is not MAXN. Published figures are measured at MAXN with jetson_clocks, so
        the same model runs two or three times slower, with nothing else wrong.

    How to fix:
        Read the mode (sudo nvpmodel -q) and the board's modes (/etc/nvpmodel.conf), switch to
        MAXN (sudo nvpmodel -m <its ID>; some boards reboot), and pin the clocks for a benchmark
        with sudo jetson_clocks. Where the power supply or cooling cannot sustain MAXN, a capped
        mode is the right choice and the slower speed is expected.

    References:
        - https://docs.nvidia.com/jetson/archives/l4t-archived/l4t-3271/Tegra%20Linux%20Driver%20Package%20Development%20Guide/power_management_nano.html
        - https://docs.nvidia.com/jetson/archives/l4t-archived/l4t-3275/Tegra%20Linux%20Driver%20Package%20Development%20Guide/power_management_jetson_xavier.html
        - https://github.com/rbonghi/jetson_stats/blob/master/jtop/core/nvpmodel.py (nvpmodel -q's output)
    """
    live = f.get("vendor_loaders.jetson_power_mode")
    if isinstance(live, dict) and live.get("mode") and not live.get("maxn"):
        yield Hit(message=f"this Jetson runs power mode {live['mode']} (ID {live.get('id')}), not MAXN (nvpmodel -q): its "
                          "CPU, GPU and memory clocks are capped to that power budget",
                  fix=_FIX, evidence={"vendor_loaders.jetson_power_mode": live})
        return
    s = _capped(f)
    if s:
        yield Hit(message=f"the Jetson runs power mode {s['mode']}, not MAXN (line {s.get('line')}: \"{told_text(s)}\"): "
                          "its CPU, GPU and memory clocks are capped to that power budget",
                  fix=_FIX, evidence=told_evidence(s))
        return
    if catalogued(f, SYMBOL):
        return   # nvpmodel says MAXN: the mode is not the cause
    jetson = first_symptom(f, "prose:jetson-said")
    slow = next((t for t in f.get("ticket.symptoms") or [] if t.get("id") in _SLOW_SAID and stated(t)), None)
    if not jetson or not slow:
        return
    yield Hit(message=f"a Jetson that runs slower than expected (line {slow.get('line')}: \"{told_text(slow)}\"): the "
                      "usual cause (NVIDIA Jetson Linux Developer Guide) is a power mode below MAXN, which caps the "
                      "clocks, or clocks not pinned with jetson_clocks; sudo nvpmodel -q confirms it",
              severity="info", fix=_FIX, evidence=told_evidence(slow))
