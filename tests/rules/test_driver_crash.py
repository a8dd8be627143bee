"""crash-in-nvidia-driver-library on real pastes of the three emitters: GDB stopping in libcuda.so
after SIGSEGV (set AI's caffe#183, fixed by a driver update), the kernel's segfault line naming
libcuda.so.565.77 (GenieX#432), and systemd-coredump's trace through cuInit (waifu2x#139)."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from rulekit import fired, paste_facts


def _facts(tmp_path, rel: str):
    path = FIXTURES / rel
    return paste_facts(tmp_path, path.read_text(encoding="utf-8"), path.name)


@pytest.mark.parametrize("rel, said", [
    ("tickets_blind_ai/caffe-183-segfault-in-libcuda-fixed-by-driver-update.txt", "(libcuda.so; line 14"),
    ("pastes/geniex-432-segfault-in-libcuda-565.txt", "(libcuda.so.565.77, driver 565.77;"),
    ("pastes/waifu2x-139-coredump-in-cuinit.txt", "in cuInit (libcuda.so.1; line 16"),
])
def test_each_emitters_crash_in_libcuda_is_named(tmp_path, rel, said):
    (f,) = fired("crash-in-nvidia-driver-library", _facts(tmp_path, rel))
    assert said in f.message, f.message
    assert "nvidia-smi --query-gpu=name,driver_version" in f.fix and "compute-sanitizer" in f.fix


def test_a_segfault_in_the_programs_own_object_is_not_the_drivers(tmp_path):
    text = (FIXTURES / "pastes" / "geniex-432-segfault-in-libcuda-565.txt").read_text(encoding="utf-8")
    facts = paste_facts(tmp_path, text.replace("libcuda.so.565.77", "libggml-cuda.so"), "own.txt")
    assert not fired("crash-in-nvidia-driver-library", facts)


def test_a_gdb_frame_in_libcuda_without_a_signal_is_not_a_crash(tmp_path):
    # a backtrace of a live (or interrupted) program: no "Program received signal" before it
    text = (FIXTURES / "tickets_blind_ai" / "caffe-183-segfault-in-libcuda-fixed-by-driver-update.txt").read_text(encoding="utf-8")
    kept = "\n".join(line for line in text.splitlines() if "received signal" not in line)
    assert not fired("crash-in-nvidia-driver-library", paste_facts(tmp_path, kept, "bt.txt"))
