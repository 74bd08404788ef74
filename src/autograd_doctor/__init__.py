"""autograd-doctor: find the line that broke PyTorch autograd, and say how to fix it.

    import autograd_doctor
    with autograd_doctor.watch():
        loss.backward()   # a failure now names the write, the save and the fix

Names are imported on first use, so that importing the package (e.g. by its pytest
plugin) does not import torch until the doctor is actually used.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS = {
    "watch": "autograd_doctor.doctor",
    "install": "autograd_doctor.doctor",
    "uninstall": "autograd_doctor.doctor",
    "installed": "autograd_doctor.doctor",
    "diagnoses_of": "autograd_doctor.doctor",
    "Doctor": "autograd_doctor.doctor",
    "AutogradDoctorError": "autograd_doctor.doctor",
    "AutogradDoctorWarning": "autograd_doctor.doctor",
    "relation": "autograd_doctor.analysis.relation",
    "describe": "autograd_doctor.analysis.relation",
    "why_no_grad": "autograd_doctor.analysis.gradient_path",
    "explain_deepcopy_failure": "autograd_doctor.analysis.copies",
    "compile": "autograd_doctor.integrations.compiled",
    "Diagnosis": "autograd_doctor.diagnosis.model",
    "Location": "autograd_doctor.diagnosis.model",
    "Report": "autograd_doctor.diagnosis.model",
    "Suggestion": "autograd_doctor.diagnosis.model",
    "TensorInfo": "autograd_doctor.diagnosis.model",
}

__all__ = sorted(_EXPORTS) + ["__version__", "load_ipython_extension", "unload_ipython_extension"]


# torch is an optional dependency (the static linter never imports it); the
# run-time doctor needs it and says so in one line.
TORCH_MISSING = ("autograd-doctor's run-time checks need PyTorch, which is not installed here: "
                 "`pip install torch` (or `pip install \"autograd-doctor[torch]\"` for a tested "
                 "release); `autograd-doctor lint` works without it")


def torch_missing(error: BaseException) -> bool:
    """Whether ``error`` is the failed import of torch itself."""
    return isinstance(error, ModuleNotFoundError) and (error.name or "").split(".")[0] == "torch"


def __getattr__(name: str):
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'autograd_doctor' has no attribute {name!r}")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if torch_missing(e):
            raise ModuleNotFoundError(TORCH_MISSING, name="torch") from None
        raise
    # The renderers (text, pictures) connect to the diagnosis model when `report` is imported:
    # a Diagnosis handed out here prints in full (`print(autograd_doctor.why_no_grad(...))`).
    importlib.import_module("autograd_doctor.report")
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__():
    return __all__


def load_ipython_extension(ipython):
    """`%load_ext autograd_doctor` in IPython / Jupyter."""
    from autograd_doctor.integrations.ipython import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython):
    from autograd_doctor.integrations.ipython import unload_ipython_extension as unload

    unload(ipython)
