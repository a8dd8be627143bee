"""The symptom catalogue read on real tickets: each message the software prints becomes the
finding its thread confirms, and the healthy controls beside them stay silent. The tickets are the
corpus in tests/fixtures/tickets (built on its own branch; HPCDOCTOR_TICKETS points elsewhere).
Generated inputs only where the point is the encoding or the size."""

from __future__ import annotations

import re

import pytest

from conftest import NODES, run_main, ticket
from hpcdoctor.parse.collect_env import parse_collect_env
from hpcdoctor.triage.messages import find_messages
from hpcdoctor.triage.paste import read_text, recognise

PASTES = NODES.parent / "pastes"


def alarms(triage, path) -> dict:
    """The error and warning findings of `check --from <path>` (conftest's triage), by symbol."""
    run = triage(path)
    assert run["rc"] in (0, 1), run["stderr"]
    return {f["symbol"]: f for f in run["doc"]["findings"] if f["severity"] in ("error", "warning")}


def report_of(triage, path) -> dict:
    run = triage(path)
    assert run["rc"] in (0, 1), run["stderr"]
    return run["doc"]


@pytest.mark.parametrize("name, sid, fields", [
    ("yuan2-65-driver-found-11000", "torch:driver-too-old", {"driver_cuda": "11000"}),
    ("mmskeleton-30-driver-insufficient", "torch:driver-insufficient", {}),
    ("d3rlpy-42-no-driver-cpu-run", "torch:no-nvidia-driver", {}),
    ("voice-changer-447-gt720-cc35", "torch:gpu-cc-old-form", {"cc": "3.5", "gpu": "GeForce GT 720"}),
    ("pytorch-172629-gb10-false-warning", "torch:gpu-cc-old-form", {"cc": "12.1", "min2": "8.0", "max": "12.0"}),
    ("pytorch-182250-v100-cc-list-form", "torch:gpu-cc-list-form", {"gpu": "Tesla V100-PCIE-32GB", "cc": "7.0"}),
    ("jetson-containers-93-libcurand10", "torch:import-missing-library", {"library": "libcurand.so.10"}),
    ("pmdm-5-undefined-symbol-cudart", "torch:import-undefined-symbol", {}),
    ("co-gat-2-cudnn-incompatibility", "torch:cudnn-mismatch", {"compiled": "(8, 5, 0)", "found": "(8, 3, 3)"}),
    ("centernet-119-cudnn-mismatch-old-form", "torch:cudnn-mismatch", {"compiled": "7102", "found": "7605"}),
    ("csprng-115-omp-error-15-windows", "openmp:omp-error-15", {"library": "libiomp5md.dll"}),
    ("pytorch-40863-oom-memory-held-elsewhere", "torch:cuda-oom", {"total": "11.17 GiB", "reserved": "530.00 MiB"}),
    ("pulid-13-oom-own-process-healthy", "torch:cuda-oom", {"free": "0 bytes", "reserved": "11.31 GiB"}),
    ("dasheng-denoiser-3-oom-two-other-processes", "torch:cuda-oom-v2", {"total": "94.98 GiB", "free": "35.05 GiB",
                                                                    "unallocated": "132.21 MiB"}),
    ("lerf-73-oom-capacty-own-process-healthy", "torch:cuda-oom-v2", {"total": "23.65 GiB", "free": "1.66 GiB"}),  # 2.1's typo
    ("keys-values-92-oom-rank-contexts-healthy", "torch:cuda-oom-v2", {"total": "39.49 GiB"}),   # PYTORCH_ALLOC_CONF tail
    ("z-image-103-hip-oom-own-process-healthy", "torch:cuda-oom-v2", {"vendor": "HIP", "total": "23.98 GiB"}),
    ("ootdiffusion-167-oom-no-process-figures-healthy", "torch:cuda-oom-v2", {"allocated": "0 bytes"}),
    ("llama-chinese-192-bf16-t4", "frameworks:bf16-refused-hf", {}),
    ("openbuddy-45-bf16-v100-lowercase", "frameworks:vllm-bf16-refused", {"cc": "7.0"}),
    ("nccl-342-docker-shm-no-space", "nccl:shm-syscall-failed", {"error": "No space left on device"}),
    # torch's own /dev/shm messages (DataLoader workers, shared tensors), read for shm-too-small
    ("protenix-2-dataloader-bus-error-docker", "torch:dataloader-killed-by-signal", {"pid": "572", "signal": "Bus error"}),
    ("pangeo-docker-images-258-dataloader-shm-hub", "torch:dataloader-worker-bus-error", {}),
    ("hopsworks-1557-dataloader-shm-no-space-k8s", "torch:torch-shm-no-space", {"file2": "/torch_739_144252761_4"}),
])
def test_message_is_read_with_its_facts(name, sid, fields):
    found = {s["id"]: s for s in find_messages(ticket(name).read_text(encoding="utf-8"))}
    assert sid in found, sorted(found)
    for k, v in fields.items():
        assert found[sid][k] == v


@pytest.mark.parametrize("name, symbol, words", [
    ("yuan2-65-driver-found-11000", "driver-too-old", ["CUDA 11.0"]),
    ("chatglm3-100-driver-found-11060", "driver-too-old", ["CUDA 11.6"]),
    ("hpe-23-driver-insufficient-traceback", "driver-too-old", []),
    ("jetson-containers-93-libcurand10", "torch-import-failed", ["libcurand.so.10"]),
    ("pytorch-2091-conda-undefined-symbol-thpp", "torch-import-failed", ["undefined symbol"]),
    ("voice-changer-447-gt720-cc35", "torch-missing-arch", ["3.5"]),
    ("pytorch-16712-gtx670m-cc21", "torch-missing-arch", ["2.1"]),
    ("pytorch-182250-v100-cc-list-form", "torch-missing-arch", ["7.0", "7.5"]),
    ("gladia-928-cudnn-ld-library-path", "duplicate-libraries", ["cuDNN"]),
    ("moneyprinter-90-omp-error-15", "duplicate-libraries", ["OpenMP"]),
    ("residualmasking-15-oom-other-programs", "gpu-memory-in-use", ["other processes"]),
    ("llamafactory-182-oom-visible-devices-overwritten", "gpu-memory-in-use", ["other processes", "26.5 GiB"]),
    ("denseclip-52-oom-other-users-a100", "gpu-memory-in-use", ["other processes", "37.4 GiB"]),
    ("dasheng-denoiser-3-oom-two-other-processes", "gpu-memory-in-use", ["pid 142715 53.82 GiB", "pid 232313 4.21 GiB",
                                                                         "58.0 GiB"]),
    ("dorado-653-oom-second-process", "gpu-memory-in-use", ["132.00 MiB", "11.0 GiB"]),   # held out
    ("lmflow-251-bf16-t4-colab", "bf16-unsupported", ["bf16"]),
    ("nccl-342-docker-shm-no-space", "shm-too-small", ["/dev/shm"]),
    ("pytorch-132570-rocm-gfx1010-not-in-wheel", "torch-missing-arch", ["gfx"]),
    ("minimax-42-vllm-nccl-shm-segment", "shm-too-small", ["/dev/shm"]),
])
def test_ticket_gets_the_diagnosis_its_thread_confirms(triage, name, symbol, words):
    hits = alarms(triage, ticket(name))
    assert symbol in hits, sorted(hits)
    for w in words:
        assert w in hits[symbol]["message"], hits[symbol]["message"]


@pytest.mark.parametrize("name, silent", [
    ("spark-vllm-docker-15-gb10-minmax-healthy", "torch-missing-arch"),   # 12.1 above a 12.0 maximum runs
    ("pytorch-164708-rtx6000ada-source-build-healthy", "torch-missing-arch"),
    ("pulid-13-oom-own-process-healthy", "gpu-memory-in-use"),            # the job's own memory
    ("pytorch-16417-oom-this-process-healthy", "gpu-memory-in-use"),      # NVML: this process, no other
    ("cads-4-oom-own-process-healthy", "gpu-memory-in-use"),
    ("lerf-73-oom-capacty-own-process-healthy", "gpu-memory-in-use"),
    ("mygirlgpt-11-oom-capacty-4gb-healthy", "gpu-memory-in-use"),
    ("keys-values-92-oom-rank-contexts-healthy", "gpu-memory-in-use"),   # 4 x 414 MiB: 4 % of the card
    ("pytorch-99699-oom-wrapped-own-process-healthy", "gpu-memory-in-use"),
    ("generateu-10-oom-container-own-pid-healthy", "gpu-memory-in-use"),  # the one listed pid is the job
    ("florence2-17-oom-container-own-pid-healthy", "gpu-memory-in-use"),  # (container: NVML's host pid)
    ("ootdiffusion-167-oom-no-process-figures-healthy", "gpu-memory-in-use"),  # no NVML figures: unknown
    ("z-image-103-hip-oom-own-process-healthy", "gpu-memory-in-use"),     # ROCm prints none either
    # held out: found after the reader was built
    ("vary-52-oom-small-other-processes-healthy", "gpu-memory-in-use"),   # others 21 %: under a quarter
    ("qanything-303-oom-visible-devices-own-process-healthy", "gpu-memory-in-use"),
    ("musepose-45-oom-wrapped-windows-shared-healthy", "gpu-memory-in-use"),
    ("ms-swift-2044-oom-terminal-wrapped-healthy", "gpu-memory-in-use"),  # wrapped inside a number
    ("seamless-416-oom-container-own-pid-healthy", "gpu-memory-in-use"),
    ("cell2location-404-oom-own-process-a100-healthy", "gpu-memory-in-use"),
    ("nccl-328-shm-open-permission-denied", "shm-too-small"),             # a permission, not a size
    ("af-sfmlearner-39-no-driver-cpu-run-healthy", "driver-too-old"),     # no driver is no old driver
])
def test_neighbouring_messages_stay_silent(triage, name, silent):
    res = triage(ticket(name))
    assert "Traceback" not in res["stderr"] and res["rc"] in (0, 1, 2), res["stderr"]
    if res["rc"] == 2:
        return  # declined, with one line: no finding at all
    assert silent not in alarms(triage, ticket(name))


def test_a_wrapped_oom_message_is_read_across_its_lines():
    """PR 99699's own example, wrapped inside "Including non-PyTorch memory,/this process": both
    NVML entries are read, so the 577 MiB process is counted and the job's 15.32 GiB is not."""
    (s,) = [s for s in find_messages(ticket("pytorch-99699-oom-wrapped-own-process-healthy").read_text(encoding="utf-8"))
            if s["id"] == "torch:cuda-oom-v2"]
    assert "Process 1246069 has 577.00 MiB memory in use" in s["procs"]
    assert "this process has 15.32 GiB memory in use" in s["procs"]


def test_held_by_others_fix_names_the_pids_and_a_way_out(triage):
    (f,) = [f for f in report_of(triage, ticket("dasheng-denoiser-3-oom-two-other-processes"))["findings"]
            if f["symbol"] == "gpu-memory-in-use"]
    assert f["fix"].startswith("nvidia-smi --query-compute-apps=pid,used_memory --format=csv")
    assert "-p 142715,232313" in f["fix"] and "CUDA_VISIBLE_DEVICES=" in f["fix"]
    assert "administrators" in f["fix"]


def test_conda_could_not_collect_is_no_package():
    parsed = parse_collect_env(ticket("pytorch-60082-gtx1070-conda-could-not-collect-healthy").read_text(encoding="utf-8"))
    assert "Could" not in (parsed["torch"].get("conda_list") or {})


REPORT = PASTES / "vllm-dstack-8xh100-collect_env-indented.txt"


@pytest.mark.parametrize("encoding, bom", [("utf-16-le", b"\xff\xfe"), ("utf-16-le", b""), ("utf-16-be", b"\xfe\xff"),
                                           ("utf-8", b"\xef\xbb\xbf")])
def test_utf16_and_bom_pastes_are_text(triage, tmp_path, encoding, bom):
    # PowerShell's `python -m torch.utils.collect_env > env.txt` writes UTF-16LE with a BOM, CRLF.
    text = REPORT.read_text(encoding="utf-8")
    path = tmp_path / "env.txt"
    path.write_bytes(bom + text.replace("\n", "\r\n").encode(encoding))
    assert recognise(read_text(str(path))).summary() == recognise(text).summary()
    doc = report_of(triage, path)
    assert doc["facts"]["torch"]["version"] == parse_collect_env(text)["torch"]["version"]


def test_full_width_colons_and_keys_without_colon_read_like_the_report(tmp_path):
    text = REPORT.read_text(encoding="utf-8")
    wide = re.sub(r"(GPU \d+|Nvidia driver version):", "\\1\uff1a", text)
    wide = wide.replace("PyTorch version:", "PyTorch version")
    assert wide != text
    plain = parse_collect_env(text)["torch"]
    read = parse_collect_env(wide)["torch"]
    for key in ("version", "gpu_models", "driver_version"):
        assert read[key] == plain[key], key
    assert [p.kind.name for p in recognise(wide).pieces] == [p.kind.name for p in recognise(text).pieces]


def test_a_paste_over_the_limit_and_prose_alone_get_one_line(tmp_path):
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * (16 * 1024 * 1024 + 1))
    prose = tmp_path / "prose.txt"
    prose.write_text("My training job is slow since yesterday, what should I check?\n")
    for path, word in ((big, "16 MiB"), (prose, "nothing hpcdoctor can read")):
        res = run_main("check", "--from", str(path))
        assert res.returncode == 2 and "Traceback" not in res.stderr
        assert len(res.stderr.strip().splitlines()) == 1 and word in res.stderr, res.stderr
