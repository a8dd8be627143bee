"""The TensorFlow and JAX rules (rules/tf_jax.py) on the facts a paste gives, on a recorded node:
each fires on its framework's own message, verbatim from the thread or the emitter named, and stays
silent on the neighbouring messages that say something else."""

from __future__ import annotations

from hpcdoctor.triage.messages import find_messages
from rulekit import facts, fired

H100 = "h100-kvm-1gpu"


def pasted(text: str):
    return facts(H100, **{"ticket.symptoms": find_messages(text)})


# https://github.com/conda-forge/jax-feedstock/issues/149 (cut)
OUTDATED = """CUDA backend failed to initialize: Unable to use CUDA because of the following issues with CUDA components:
Outdated cuDNN installation found.
Version JAX was built against: 8907
Minimum supported: 9100
Installed version: 8907
The local installation version must be no lower than 9100..(Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)
"""
# xla/service/gpu/nvptx_compiler.cc's format string (jax-cuda12-pjrt 0.4.30 wheel)
PTXAS = ("The NVIDIA driver's CUDA version is 12.2 which is older than the ptxas CUDA version (12.5.40). Because the "
         "driver is older than the ptxas version, XLA is disabling parallel compilation, which may slow down compilation.")
# https://github.com/sashakolpakov/dire-jax/issues/14
FALLBACK = ("WARNING:2025-05-27 20:22:28,949:jax._src.xla_bridge:791: An NVIDIA GPU may be present on this machine, but a "
            "CUDA-enabled jaxlib is not installed. Falling back to cpu.")
# https://github.com/gladiaio/gladia/issues/927 (jax 0.3: printed on every machine without a GPU too)
NO_GPU = ("2022-11-30 12:50:08,211 - jax._src.lib.xla_bridge - WARNING - No GPU/TPU found, falling back to CPU. "
          "(Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)")
# https://github.com/Zuricho/ParallelFold/issues/13
JAXLIB = "ValueError: jaxlib is version 0.1.69, but this version of jax requires version 0.1.74."


def test_outdated_cudnn_is_cudnns_own_rule_with_the_versions_decoded():
    (f,) = fired("cudnn-version-mismatch", pasted(OUTDATED))
    assert "cuDNN 8.9.7 (8907) loaded" in f.message and "the minimum it supports 9100" in f.message
    assert 'pip install -U "jax[cuda12]"' in f.fix
    assert not fired("cuda-library-version-mismatch", pasted(OUTDATED))


def test_another_outdated_cuda_component_stays_a_library_version_mismatch():
    # jax_plugins/cuda/__init__.py @ cec06d11 _make_msg with cuBLAS's minimum (120100 = 12.1.0)
    text = ("Unable to use CUDA because of the following issues with CUDA components:\nOutdated cuBLAS installation found.\n"
            "Version JAX was built against: 120800\nMinimum supported: 120100\nInstalled version: 120001\n"
            "The local installation version must be no lower than 120100.\n")
    (f,) = fired("cuda-library-version-mismatch", pasted(text))
    assert "cuBLAS" in f.message and "120001 loaded, 120100 expected" in f.message
    assert not fired("cudnn-version-mismatch", pasted(text))


def test_a_driver_older_than_ptxas_is_no_library_mismatch():
    assert not fired("cuda-library-version-mismatch", pasted(PTXAS))
    assert not fired("driver-too-old", pasted(PTXAS))


def test_jax_without_cuda_from_its_own_warning():
    (f,) = fired("jax-without-cuda", pasted(FALLBACK))
    assert "no CUDA backend" in f.message


def test_the_old_cpu_fallback_is_no_jax_without_cuda():
    assert not fired("jax-without-cuda", pasted(NO_GPU))


def test_jaxlib_too_old_for_jax():
    (f,) = fired("jax-jaxlib-mismatch", pasted(JAXLIB))
    assert "0.1.69" in f.message and "0.1.74" in f.message and "jax[cuda12]" in f.fix


def test_a_cuda_backend_failure_is_no_jaxlib_mismatch():
    assert not fired("jax-jaxlib-mismatch", pasted(OUTDATED))


# https://github.com/jax-ml/jax/issues/22416: jaxlib 0.4.28+cuda12 beside a CUDA plugin of a later release
PJRT = ("RuntimeError: Unable to initialize backend 'cuda': INVALID_ARGUMENT: Mismatched PJRT plugin PJRT API version "
        "(0.54) and framework PJRT API version 0.51).")


def test_a_cuda_plugin_of_another_release_than_jaxlib():
    (f,) = fired("jax-jaxlib-mismatch", pasted(PJRT))
    assert "0.54" in f.message and "0.51" in f.message


def test_a_cpu_only_jax_in_the_jobs_python_on_a_gpu_node_is_advice():
    cpu_only = facts(H100, **{"torch.packages": {"jax": "0.6.1", "jaxlib": "0.6.1", "numpy": "2.2.6"}})
    (f,) = fired("jax-without-cuda", cpu_only)
    assert f.severity == "advice" and 'pip install -U "jax[cuda12]"' in f.fix
    # the recorded H100's own install: jax 0.11.2 with jax-cuda13-pjrt and jax-cuda13-plugin (cmd/pip_list.txt)
    with_cuda = facts(H100, **{"torch.packages": {"jax": "0.11.2", "jaxlib": "0.11.2", "jax-cuda13-pjrt": "0.11.2",
                                                  "jax-cuda13-plugin": "0.11.2"}})
    assert not fired("jax-without-cuda", with_cuda)
    # jaxlib's own CUDA builds before the plugins
    assert not fired("jax-without-cuda", facts(H100, **{"torch.packages": {"jax": "0.4.7", "jaxlib": "0.4.7+cuda11.cudnn86"}}))
