"""Python bindings of netCDF and HDF5 asked for MPI-parallel I/O that were built serial
(knowledge/messages/parallel_io_builds.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "library-built-without-mpi"
# Each binding's build that cannot do parallel I/O, and its own way to an MPI build: spack's variants
# (py-netcdf4 +mpi needs netcdf-c+mpi and hdf5+mpi; py-h5py +mpi), conda-forge's mpi_* builds, and the
# projects' source builds.
_BUILDS = {
    "parallel_io_builds:netcdf4-parallel-needs-mpi-netcdf-c": (
        "netCDF4-python was built against a netcdf-c without parallel I/O",
        "nc-config --has-parallel4 --has-pnetcdf   # the netcdf-c on PATH (the site module's): 'yes' to either is a "
        "parallel build to build netCDF4 against\n"
        "spack install py-netcdf4+mpi ^netcdf-c+mpi ^hdf5+mpi   # spack; or conda install -c conda-forge "
        "'netcdf4=*=mpi*' mpi4py; or, with the site's parallel netcdf-c module loaded: CC=mpicc python3 -m pip "
        "install --no-binary=netCDF4 netCDF4 mpi4py"),
    "parallel_io_builds:h5py-built-without-mpi": (
        "h5py was built without MPI (against a serial HDF5)",
        "python3 -c 'import h5py; print(h5py.get_config().mpi)'   # False: a serial build (PyPI's wheels are)\n"
        "spack install py-h5py+mpi ^hdf5+mpi   # spack; or conda install -c conda-forge 'h5py=*=mpi*' mpi4py; or, "
        "against the site's parallel HDF5 module: CC=mpicc HDF5_MPI=ON python3 -m pip install --no-binary=h5py h5py"),
}


@rule("SW130", SYMBOL, "error", "parallel I/O asked of a netCDF or HDF5 binding built without MPI", impact=5)
def library_built_without_mpi(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted traceback, netCDF4-python's "parallel mode requires MPI enabled netcdf-c" and
        h5py's "h5py was built without MPI support, can't use mpio driver": the program asked for
        MPI-parallel I/O (Dataset(..., parallel=True), File(..., driver='mpio')).

    Why it matters:
        Both bindings decide at build time: compiled against a serial netcdf-c or HDF5 (PyPI's
        wheels are), they cannot do parallel I/O, however the job is launched and whichever
        parallel library is loaded at run time.

    How to fix:
        Install a build made against a parallel netcdf-c or HDF5: spack's +mpi variants, conda-forge's
        mpi builds, or a source build with the site's parallel module loaded (mpicc, HDF5_MPI=ON for
        h5py).

    References:
        - https://github.com/Unidata/netcdf4-python/blob/master/src/netCDF4/_netCDF4.pyx (Dataset: parallel mode)
        - https://docs.h5py.org/en/stable/build.html#building-against-parallel-hdf5
        - https://github.com/spack/spack/blob/develop/var/spack/repos/builtin/packages/py-netcdf4/package.py (variant mpi)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    what, fix = _BUILDS[s["id"]]
    yield Hit(message=f"{what} (line {s.get('line')}: \"{told_text(s)}\"): parallel I/O is decided when the module is "
                      "built, so this install cannot do it under any launcher",
              fix=fix, evidence=told_evidence(s))
