"""hpcdoctor: environment diagnostics and tuning advice for HPC and AI compute nodes."""

__version__ = "0.1.0"
