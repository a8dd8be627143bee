"""TensorFlow's DsoLoader and CUDA diagnostics across its history (knowledge/messages/tensorflow.toml,
xla.toml): the 0.x-1.13 "Couldn't open CUDA library", the 1.14-2.0 "Could not dlopen library" and
their success lines feed cuda-runtime-library-missing where the same log shows the NVIDIA driver's
own library opened; "kernel driver does not appear to be running" with no GPU shown is GPU001 at info."""

from __future__ import annotations

from rulekit import fired, paste_facts, recorded_paste_facts


def _ids(g):
    return [s["id"] for s in g["facts"]["ticket"]["symptoms"]]


def test_tensorflow_0x_cudnn_not_on_the_loader_path_beside_the_driver_opened():
    # tensorflow/tensorflow#4168: cuDNN not found, libcuda.so.1 opened: a GPU machine without cuDNN on the path
    g = recorded_paste_facts("tensorflow-4168-libcudnn-not-on-loader-path.txt")
    assert {"tensorflow:libcudnn", "tensorflow:unable-to-load-cudnn-dso", "tensorflow:opened-cuda-library"} <= set(_ids(g))
    (f,) = fired("cuda-runtime-library-missing", g)
    assert "libcudnn.so" in f.message and "libcuda.so.1" in f.message and f.severity == "error"
    assert "ldconfig -p | grep libcudnn" in f.fix and "tensorflow[and-cuda]" not in f.fix


def test_tensorflow_0x_on_a_machine_without_the_driver_stays_silent(tmp_path):
    # the emitter's own format (dso_loader.cc @ dec41693) filled in: a GPU build on a CPU machine fails
    # on libcuda.so.1 too, and that is no fault
    g = paste_facts(tmp_path, "I tensorflow/stream_executor/dso_loader.cc:105] Couldn't open CUDA library libcudnn.so. "
                              "LD_LIBRARY_PATH: \nI tensorflow/stream_executor/dso_loader.cc:105] Couldn't open CUDA "
                              "library libcuda.so.1. LD_LIBRARY_PATH: \n")
    assert "tensorflow:libcudnn" in _ids(g) and "tensorflow:libcuda" in _ids(g)
    assert not fired("cuda-runtime-library-missing", g)


def test_tensorflow_1_14_could_not_dlopen_the_runtime_beside_the_driver_opened(tmp_path):
    # the 1.14 lines as a public blog post quotes them (code index file id 6926873868), cut at the line
    g = paste_facts(tmp_path, "2019-08-19 23:08:38.574010: I tensorflow/stream_executor/platform/default/dso_loader.cc:42] "
                              "Successfully opened dynamic library libcuda.so.1\n"
                              "2019-08-19 23:08:38.608115: I tensorflow/stream_executor/platform/default/dso_loader.cc:53] "
                              "Could not dlopen library 'libcudart.so.10.0'; dlerror: libcudart.so.10.0: cannot open "
                              "shared object file: No such file\n")
    (f,) = fired("cuda-runtime-library-missing", g)
    assert "libcudart.so.10.0" in f.message


def test_tensorflow_1_0_on_windows_names_the_dll_and_path(tmp_path):
    # the emitter's format on Windows (no LD_LIBRARY_PATH), as a public TensorFlow 1.0 log prints it
    g = paste_facts(tmp_path, "I c:\\tf_jenkins\\tensorflow\\stream_executor\\dso_loader.cc:126] Couldn't open CUDA "
                              "library cudnn64_5.dll\nI c:\\tf_jenkins\\tensorflow\\stream_executor\\dso_loader.cc:135] "
                              "successfully opened CUDA library nvcuda.dll locally\n")
    (f,) = fired("cuda-runtime-library-missing", g)
    assert "cudnn64_5.dll" in f.message and f.fix.startswith("where cudnn64_5.dll")


def test_kernel_driver_not_running_with_no_gpu_shown_is_info():
    # tensorflow/tensorflow#255: cuInit's CUDA_ERROR_NO_DEVICE, then the diagnostics; no GPU in the paste
    g = recorded_paste_facts("tensorflow-255-cuinit-no-device-kernel-driver-not-running.txt")
    (f,) = fired("gpu-driver-unusable", g)
    assert f.severity == "info" and "if this machine has an NVIDIA GPU" in f.message
    assert "lspci | grep -i nvidia" in f.fix and "lsmod | grep nvidia" in f.fix and "nvidia-smi" in f.fix


def test_kernel_driver_not_running_where_the_user_says_cpu_node_is_silent(tmp_path):
    # the user's own words that the machine has no GPU (prose.toml cpu-node-said), then the line
    g = paste_facts(tmp_path, "TensorFlow prints this on a CPU-only node:\n"
                              "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:156] kernel driver does not appear "
                              "to be running on this host (node01): /proc/driver/nvidia/version does not exist\n")
    assert "prose:cpu-node-said" in _ids(g) and "xla:kernel-driver-not-running" in _ids(g)
    assert not fired("gpu-driver-unusable", g)
