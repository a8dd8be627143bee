"""How long hpcdoctor.knowledge.gpus.lookup takes, first time and cached, per GPU name.

Run: .venv/bin/python bench/gpu_lookup.py [--json-out FILE]
Every rule that judges a GPU looks its name up, so a node with 8 GPUs asks dozens of times.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from hpcdoctor.knowledge import gpus

PCI_IDS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "public" / "pci_ids_nvidia_amd.txt"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--json-out", metavar="FILE", help="also write the result, machine and date as JSON")
    args = ap.parse_args()
    names = [line.split("  ", 1)[1] for line in PCI_IDS.read_text(encoding="utf-8").splitlines()
             if line.startswith("\t") and "  " in line]
    gpus.lookup("warm the table")
    t0 = time.perf_counter()
    for n in names:
        gpus.lookup(n)
    first = (time.perf_counter() - t0) / len(names)
    t0 = time.perf_counter()
    for _ in range(100):
        gpus.lookup("NVIDIA GeForce RTX 4090")
    cached = (time.perf_counter() - t0) / 100
    print(f"{len(names)} pci.ids names: {first * 1e6:.1f} us per first lookup; {cached * 1e6:.2f} us cached")
    import result

    result.write(args.json_out, "gpu_lookup", result.invocation(),
                 {"names": len(names), "first_us": round(first * 1e6, 2), "cached_us": round(cached * 1e6, 3)})


if __name__ == "__main__":
    main()
