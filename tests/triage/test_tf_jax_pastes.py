"""TensorFlow's and JAX's own messages (issue 24: knowledge/messages/tensorflow.toml, jax.toml,
xla.toml) read on real pastes (fixtures/pastes/SOURCES.md, verbatim cuts of the threads named
there) and on the emitters' format strings: what the thread established fires, with the
framework's own fix, never torch's or mmcv's; the benign lines every healthy import prints, and the
CUDA library lines of a machine where TensorFlow never claimed a GPU, stay silent."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, check_from
from hpcdoctor.triage.messages import find_messages

PASTES = FIXTURES / "pastes"
ALARM = ("error", "warning")


def findings(path) -> dict:
    run = check_from(path)
    assert run["doc"] is not None, run["stderr"]
    return {f["symbol"]: f for f in run["doc"]["findings"]}


def alarms(path) -> dict:
    return {k: v for k, v in findings(path).items() if v["severity"] in ALARM}


def test_tensorflow_skipping_the_gpu_names_the_libraries_and_tensorflows_own_install():
    got = findings(PASTES / "behaviormetrics-385-tf-cannot-dlopen-libcudnn.txt")
    hit = got["cuda-runtime-library-missing"]
    assert "TensorFlow" in hit["message"] and "libcudnn.so.8" in hit["message"] and "libcusolver.so.11" in hit["message"]
    assert 'pip install -U "tensorflow[and-cuda]"' in hit["fix"]
    assert "tf.sysconfig.get_build_info()" in hit["fix"]
    # never the fix of another program (mmcv's extension, torch's build)
    assert "mmcv" not in hit["fix"] and "import torch" not in hit["fix"]
    assert "torch-import-failed" not in got


def test_dso_lines_without_tensorflows_verdict_are_what_every_cpu_only_import_prints():
    # the same DsoLoader lines, without "Cannot dlopen some GPU libraries": no GPU was claimed
    assert "cuda-runtime-library-missing" not in findings(PASTES / "styleclip-20-tf-cudart-10-0-dso-lines-only.txt")


@pytest.mark.parametrize("line", [
    # tsl/cuda/cudart_stub.cc (TensorFlow 2.14+), on a CPU-only machine or beside torch
    "2024-02-19 20:35:30.820121: I external/local_tsl/tsl/cuda/cudart_stub.cc:31] Could not find cuda drivers on your machine, GPU will not be used.",
    # stream_executor cudart_stub.cc (TensorFlow 2.1 to 2.13), after its libcudart line
    "2021-02-25 21:57:32.615412: W tensorflow/stream_executor/platform/default/dso_loader.cc:60] Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No such file or directory\n"
    "2021-02-25 21:57:32.615433: I tensorflow/stream_executor/cuda/cudart_stub.cc:29] Ignore above cudart dlerror if you do not have a GPU set up on your machine.",
    # TensorRT is optional
    "2026-08-08 07:53:50.237474: W tensorflow/compiler/xla/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libnvinfer.so.7'; dlerror: libnvinfer.so.7: cannot open shared object file: No such file or directory; LD_LIBRARY_PATH: /opt/hostedtoolcache/Python/3.9.25/x64/lib",
])
def test_tensorflows_notes_on_a_machine_without_a_gpu_are_silent(tmp_path, line):
    path = tmp_path / "ticket.txt"
    path.write_text(line + "\n", encoding="utf-8")
    assert alarms(path) == {}


@pytest.mark.parametrize("paste", ["tensorflow-110956-tf220-import-benign-lines", "tensorflow-23385-numa-and-found-device-lines"])
def test_the_lines_every_healthy_tensorflow_start_prints_are_read_and_silent(paste):
    text = (PASTES / f"{paste}.txt").read_text()
    read = {s["id"] for s in find_messages(text)}
    assert read & {"tensorflow:onednn-custom-operations-on", "tensorflow:cpu-optimized", "xla:numa-node-negative"}
    # only the GPU's memory at start feeds a rule (gpu-memory-in-use judges how much was free): the
    # start-up notes themselves feed none, and nothing fires
    assert all(not s["rules"] or s["key"].startswith("device-memory-at-start")
               for s in find_messages(text) if s["family"] in ("tensorflow", "xla"))
    assert alarms(PASTES / f"{paste}.txt") == {}


def test_tensorflow_ignoring_a_gpu_below_its_builds_minimum_is_the_framework_not_torch():
    got = findings(PASTES / "tf-pose-estimation-387-k40c-below-tf-minimum.txt")
    hit = got["framework-missing-arch"]
    assert "3.7" in hit["message"] and "3.5" in hit["message"] and "TensorFlow" in hit["message"]
    assert "cuda_compute_capabilities" in hit["fix"]
    assert "torch-missing-arch" not in got


@pytest.mark.parametrize("paste, found, built", [
    ("gcbfplus-1-jax-cudnn-8600-older-than-8906", "8.6.0 (8600)", "8.9.6 (8906)"),
    ("jaxlib-feedstock-329-cudnn-9-10-under-9-13", "9.10.1", "9.13.1"),
])
def test_a_cudnn_older_than_the_build_is_cudnns_own_rule(paste, found, built):
    # cuDNN's version is cudnn-version-mismatch's in every framework; the other CUDA libraries are
    # cuda-library-version-mismatch's (rules/libraries.py, rules/tf_jax.py)
    got = findings(PASTES / f"{paste}.txt")
    hit = got["cudnn-version-mismatch"]
    assert f"cuDNN {found} loaded, built against {built}" in hit["message"]
    assert 'pip install -U "jax[cuda12]"' in hit["fix"] and "unset LD_LIBRARY_PATH" in hit["fix"]
    assert not {"cuda-library-version-mismatch", "driver-too-old", "duplicate-libraries", "torch-import-failed"} & set(got)


def test_jax_unable_to_load_cudnn_gets_jaxs_install_not_torchs():
    hit = findings(PASTES / "jax-20519-unable-to-load-cudnn.txt")["cuda-runtime-library-missing"]
    assert "JAX" in hit["message"] and "cuDNN" in hit["message"]
    assert 'pip install -U "jax[cuda12]"' in hit["fix"] and "torch" not in hit["fix"]


def test_jax_without_cuda_alone_is_advice_and_beside_its_devices_a_warning(tmp_path):
    alone = findings(PASTES / "dire-jax-14-cuda-jaxlib-not-installed.txt")["jax-without-cuda"]
    assert alone["severity"] == "advice" and 'pip install -U "jax[cuda12]"' in alone["fix"]
    # jax.devices() listing only the CPU: the program asked JAX for its devices (jax-ml/jax#20519's line)
    path = tmp_path / "ticket.txt"
    path.write_text((PASTES / "dire-jax-14-cuda-jaxlib-not-installed.txt").read_text()
                    + "jax.devices (1 total, 1 local): [CpuDevice(id=0)]\n", encoding="utf-8")
    assert findings(path)["jax-without-cuda"]["severity"] == "warning"


def test_jaxlib_older_than_jax_requires():
    hit = findings(PASTES / "parallelfold-13-jaxlib-0-1-69-under-jax-0-2-26.txt")["jax-jaxlib-mismatch"]
    assert "0.1.69" in hit["message"] and "0.1.74" in hit["message"]


def test_a_cpu_fallback_after_cuinit_failed_stays_the_drivers():
    # jaxsim#50: cuInit's unknown error after a suspend, then jax 0.4's "No GPU/TPU found": the driver
    got = findings(PASTES / "jaxsim-50-cuinit-unknown-after-suspend.txt")
    assert "gpu-driver-unusable" in got and "jax-without-cuda" not in got


def test_driver_diagnostics_read_where_they_say_the_driver_is_unusable(tmp_path):
    # cuda_diagnostics.cc: a kernel module and libcuda of two versions (a code-index README's log)
    mismatch = tmp_path / "mismatch.txt"
    mismatch.write_text("2021-09-13 23:57:29.694695: E tensorflow/stream_executor/cuda/cuda_diagnostics.cc:306] kernel "
                        "version 460.56.0 does not match DSO version 470.57.2 -- cannot find working devices in this "
                        "configuration\n", encoding="utf-8")
    hit = findings(mismatch)["gpu-driver-unusable"]
    assert "reboot" in hit["fix"]
    # no kernel module: what every machine without an NVIDIA driver prints after cuInit fails
    absent = tmp_path / "absent.txt"
    absent.write_text("kernel driver does not appear to be running on this host (node01): /proc/driver/nvidia/version "
                      "does not exist\n", encoding="utf-8")
    assert findings(absent)["gpu-driver-unusable"]["severity"] == "info"  # the machine may have no GPU


def test_the_driver_older_than_ptxas_is_a_slowdown_not_a_driver_too_old(tmp_path):
    path = tmp_path / "ticket.txt"
    path.write_text("The NVIDIA driver's CUDA version is 12.2 which is older than the ptxas CUDA version (12.5.40). "
                    "Because the driver is older than the ptxas version, XLA is disabling parallel compilation, which may "
                    "slow down compilation. You should update your NVIDIA driver or use the NVIDIA-provided CUDA forward "
                    "compatibility packages.\n", encoding="utf-8")
    assert [s["id"] for s in find_messages(path.read_text())] == ["xla:driver-older-than-ptxas"]
    assert alarms(path) == {}


def test_tensorflows_own_import_failing_on_a_cuda_library_gets_tensorflows_fix():
    hit = findings(PASTES / "tensorflow-17689-import-libcudnn-so-6.txt")["cuda-runtime-library-missing"]
    assert "libcudnn.so.6" in hit["message"]
    assert "pip show tensorflow" in hit["fix"] and "mmcv" not in hit["fix"]
    # tf.sysconfig would fail the same way: the import is what fails
    assert "import tensorflow" not in hit["fix"]


def test_cuda_error_35_in_tensorflows_words_is_answered_for_tensorflow_not_torch():
    hit = findings(PASTES / "bert-285-tf-cudagetdevice-driver-insufficient.txt")["driver-too-old"]
    assert "TensorFlow" in hit["message"] and "torch" not in hit["message"] + hit["fix"]


def test_a_gpu_tensorflow_listed_then_cuda_dlls_it_could_not_open_on_windows():
    hit = findings(PASTES / "tensorflow-41909-windows-found-device-cudart64-101-missing.txt")["cuda-runtime-library-missing"]
    # the DLLs after "Found device 0", not the CPU-only note before it
    assert "cudart64_101.dll" in hit["message"] and "cublas64_10.dll" in hit["message"]
    assert "the GPU listed on line 6" in hit["message"]
    # TensorFlow's "Ignore above cudart dlerror if you do not have a GPU ..." is not the user saying so
    text = (PASTES / "tensorflow-41909-windows-found-device-cudart64-101-missing.txt").read_text()
    assert "prose:no-gpu-here" not in {s["id"] for s in find_messages(text)}


def test_jaxs_fallback_beside_a_torch_job_that_trains_on_the_gpu_raises_no_alarm():
    # kohya-colab#133: the trainer runs on torch; the maintainer says to ignore JAX's warning
    got = findings(PASTES / "kohya-colab-133-jax-fallback-while-torch-trains-healthy.txt")
    assert got["jax-without-cuda"]["severity"] == "advice"
    assert alarms(PASTES / "kohya-colab-133-jax-fallback-while-torch-trains-healthy.txt") == {}
