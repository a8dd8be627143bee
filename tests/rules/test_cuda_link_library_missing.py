"""cuda-runtime-library-missing at build time: a link step that finds no CUDA library (-lcudart,
-lcublas ...) in its folders. The fix is the package that installs the unversioned link, or
LIBRARY_PATH: LD_LIBRARY_PATH is the loader's, and the loader never ran."""

from __future__ import annotations

from rulekit import fired, paste_facts, recorded_paste_facts


def test_a_conda_environments_linker_without_libcudart():
    # https://github.com/ivan-chai/torch-linear-assignment/issues/2: the line inside backticks of prose
    (f,) = fired("cuda-runtime-library-missing",
                 recorded_paste_facts("torch-linear-assignment-2-conda-ld-cannot-find-lcudart.txt"))
    assert f.severity == "error" and "link step cannot find libcudart" in f.message and "line 9" in f.message
    assert "conda environment's linker" in f.message
    assert "conda install -c conda-forge cuda-cudart-dev" in f.fix and "LIBRARY_PATH" in f.fix
    assert "LD_LIBRARY_PATH" not in f.fix


# GNU ld 2.40's format, as the development VM's /usr/bin/ld printed it for another -l name (linker.toml),
# with cufft filled in; and lld's (lld/ELF/Driver.cpp). No public paste of these two used.
SYSTEM_LD = "/usr/bin/ld: cannot find -lcufft: No such file or directory\ncollect2: error: ld returned 1 exit status\n"
LLD = "ld.lld: error: unable to find library -lcublasLt\n"


def test_a_system_linker_is_told_the_toolkits_folder(tmp_path):
    (f,) = fired("cuda-runtime-library-missing", paste_facts(tmp_path, SYSTEM_LD))
    assert "libcufft" in f.message and "conda environment" not in f.message
    assert "conda install" not in f.fix and f.fix.splitlines()[-1].startswith('export LIBRARY_PATH="${CUDA_HOME')


def test_lld_names_the_library_too(tmp_path):
    (f,) = fired("cuda-runtime-library-missing", paste_facts(tmp_path, LLD))
    assert "libcublasLt" in f.message


def test_a_library_that_is_not_cudas_is_not_this(tmp_path):
    text = "/usr/bin/ld: cannot find -lgsl: No such file or directory\n"
    assert not fired("cuda-runtime-library-missing", paste_facts(tmp_path, text))
    # and a name that only starts like one
    assert not fired("cuda-runtime-library-missing", paste_facts(tmp_path, "/usr/bin/ld: cannot find -lcudartx\n"))


# --- Torch7's cudnn.torch: one cuDNN major per branch (ffi.lua) ---------------------------------


def test_cudnn_torch_r4_names_cudnn_4_not_5():
    # https://github.com/jcjohnson/neural-style/issues/224: the R4 branch on OS X; the line is long
    # (luajit's chain of re-raising files) and the quote starts at the message
    (f,) = fired("cuda-runtime-library-missing",
                 recorded_paste_facts("neural-style-224-libcudnn-r4-not-found-in-library-path.txt"))
    assert "libcudnn.so.4" in f.message and "cuDNN 4 only" in f.message
    assert "'libcudnn (R4) not found in library path." in f.message
    assert "export CUDNN_PATH=/usr/local/cuda/lib64/libcudnn.so.4" in f.fix


def test_cudnn_torch_r5_in_a_notebook_kernel():
    # https://github.com/facebookarchive/iTorch/issues/160: works from the shell, not in Jupyter
    (f,) = fired("cuda-runtime-library-missing",
                 recorded_paste_facts("itorch-160-libcudnn-r5-not-found-in-jupyter.txt"))
    assert "libcudnn.so.5" in f.message and "kernel.json" in f.fix


def test_cudnn_torch_version_check_is_not_a_missing_library(tmp_path):
    # the bindings found a cuDNN of another major: cudnn-version-mismatch's, not this
    text = "These bindings are for CUDNN 5.x (5005 <= cudnn.version > 6000) , while the loaded CuDNN is version: 6020  \n"
    assert not fired("cuda-runtime-library-missing", paste_facts(tmp_path, text))
