"""hpcdoctor: environment diagnostics and tuning advice for HPC and AI compute nodes."""

from pathlib import Path as _Path

__version__ = "0.1.0"

# checks/ and rules/ sit beside this folder in a source checkout and are mapped into the package by
# the install (pyproject's package-dir). Run from the checkout's root without an editable install
# (`python -m hpcdoctor` after `pip install .`), this folder shadows the installed package: map
# them the same way here, so the checkout runs as the wheel does instead of failing to find its rules.
_top = _Path(__file__).resolve().parent.parent
if not (_Path(__file__).parent / "rules").is_dir() and (_top / "rules" / "__init__.py").is_file() \
        and (_top / "checks" / "__init__.py").is_file() and (_top / "pyproject.toml").is_file():
    __path__.append(str(_top))  # type: ignore[name-defined]  # noqa: F821
