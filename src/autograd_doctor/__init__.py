"""autograd-doctor: find the line that broke PyTorch autograd, and say how to fix it.

    import autograd_doctor
    with autograd_doctor.watch():
        loss.backward()   # a failure now names the write, the save and the fix
"""

from autograd_doctor.doctor import (
    AutogradDoctorError, AutogradDoctorWarning, Doctor, diagnoses_of, install, installed, uninstall, watch,
)
from autograd_doctor.analysis.copies import explain_deepcopy_failure
from autograd_doctor.analysis.gradient_path import why_no_grad
from autograd_doctor.analysis.relation import describe, relation
from autograd_doctor.report.model import Diagnosis, Location, Report, Suggestion, TensorInfo

__version__ = "0.1.0"


def load_ipython_extension(ipython):
    """`%load_ext autograd_doctor` in IPython / Jupyter."""
    from autograd_doctor.ipython import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython):
    from autograd_doctor.ipython import unload_ipython_extension as unload

    unload(ipython)

__all__ = [
    "watch", "install", "uninstall", "installed", "diagnoses_of", "Doctor",
    "relation", "describe", "why_no_grad", "explain_deepcopy_failure",
    "AutogradDoctorError", "AutogradDoctorWarning",
    "Diagnosis", "Location", "Report", "Suggestion", "TensorInfo", "__version__",
]
