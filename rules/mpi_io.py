"""An MPI library's MPI-IO setting that breaks parallel HDF5 and netCDF: Intel MPI's native parallel
file-system support (I_MPI_EXTRA_FILESYSTEM, I_MPI_FILESYSTEM; knowledge/messages/intel_mpi.toml)
named in a paste whose parallel reads or writes fail (hdf5.toml's HDF5-DIAG, netcdf.toml)."""

from __future__ import annotations

import shlex
from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "impi-native-fs-io-fails"
_OFF = frozenset(("0", "no", "off", "disable", "false", "ufs"))
# A parallel I/O failure in the same paste: HDF5's error stack, a netCDF error, an MPI-IO call's error.
_IO_FAILED = ("hdf5:", "netcdf:")


def _io_failure(f: FactView):
    return next((s for s in f.get("ticket.symptoms") or [] if str(s.get("id", "")).startswith(_IO_FAILED)
                 or "MPI_File_" in str(s.get("text", ""))), None)


@rule("ENV084", SYMBOL, "warning", "Intel MPI's native parallel file-system I/O is on where parallel HDF5/netCDF I/O fails",
      impact=4)
def impi_native_fs_io_fails(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, Intel MPI's native parallel file-system support turned on or forced
        (I_MPI_EXTRA_FILESYSTEM=1, I_MPI_EXTRA_FILESYSTEM_FORCE=lustre, I_MPI_FILESYSTEM from
        2021.11, Intel MPI 2018's I_MPI_EXTRA_FILESYSTEM_LIST) beside a parallel I/O failure (an
        HDF5-DIAG error stack, a netCDF error, an MPI_File_* error): a warning, since the setting
        is one cause of such failures, which turning it off tests.

    Why it matters:
        With the setting, Intel MPI's MPI-IO uses its own drivers for the parallel file system
        (Lustre, GPFS, PanFS, NFS) instead of the generic POSIX one; parallel HDF5 and netCDF-4
        build on MPI-IO, so a driver that misbehaves on the site's file system fails every
        collective read or write, while the same code works with the setting off.

    How to fix:
        Unset it (or set 0) in the job script and the modules that set it, and rerun; if that
        cures it, report the file system and Intel MPI version to the site.

    References:
        - https://intel.com/content/www/us/en/docs/mpi-library/developer-reference-windows/2021-11/what-s-new.html (I_MPI_FILESYSTEM added; I_MPI_EXTRA_FILESYSTEM deprecated)
        - https://www.intel.com/content/www/us/en/docs/mpi-library/developer-reference-linux/2021-11/other-environment-variables.html
        - https://github.com/NOAA-EMC/GSI/issues/694 (parallel netCDF reads fail on Hercules with I_MPI_EXTRA_FILESYSTEM=1)
    """
    told = [s for s in catalogued(f, SYMBOL) if str(s.get("value") or "").lower() not in _OFF]
    if not told:
        return
    failed = _io_failure(f)
    if failed is None:
        return
    s = told[0]
    variable = str(s.get("variable") or "I_MPI_EXTRA_FILESYSTEM")
    value = s.get("value")
    setting = f"{variable}={value}" if value else variable
    yield Hit(message=(f"the paste sets Intel MPI's native parallel file-system I/O ({setting}, line {s.get('line')}: "
                       f"\"{told_text(s)}\") and parallel I/O fails (line {failed.get('line')}: \"{told_text(failed)}\"): "
                       "Intel MPI's own MPI-IO driver for the file system is a known cause; rerun with it off to tell"),
              fix=(f"unset {shlex.quote(variable)} I_MPI_EXTRA_FILESYSTEM_FORCE I_MPI_FILESYSTEM_FORCE   # in the job script, "
                   "after the modules load (or export it =0); then rerun the job\n"
                   "env | grep -E '^I_MPI_(EXTRA_)?FILESYSTEM'   # what the modules set: module show the Intel MPI module "
                   "to find where"),
              evidence=dict(told_evidence(s), io_failure_line=failed.get("line")))
