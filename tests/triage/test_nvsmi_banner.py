"""nvidia-smi's banner pasted alone is read (the driver's version, the newest CUDA it runs); inside
the whole table it is left to the table's reader, which reads the same line as a tool output."""

from __future__ import annotations

from pathlib import Path

from hpcdoctor.triage.messages import find_messages

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _banner(path: Path):
    return [s for s in find_messages(path.read_text(encoding="utf-8")) if s["id"] == "nvidia_smi:banner"]


def test_a_banner_retyped_into_a_sentence_states_the_driver_and_its_cuda():
    (s,) = _banner(FIXTURES / "tickets_blind_b" / "mobileagent-60-torch-not-compiled-cuda-driver-475.txt")
    assert (s["driver"], s["cuda"], s["line"]) == ("475.14", "11.4", 1)


def test_the_banner_inside_a_pasted_table_is_the_tables():
    for paste in ("tickets/fooocus-1313-driver-found-11040-nvsmi.txt",
                  "tickets_blind_a/mlverse-torch-336-nvcc-vs-nvidia-smi-healthy.txt"):
        text = (FIXTURES / paste).read_text(encoding="utf-8")
        assert "| NVIDIA-SMI" in text and _banner(FIXTURES / paste) == [], paste
