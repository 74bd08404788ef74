"""`AUTOGRAD_DOCTOR=1`: the doctor in every Python process, without changing the command.

The wheel puts `autograd_doctor_startup.pth` into site-packages. Python runs its one line
at every start-up; with the variable unset that line reads one environment variable and
stops, so a process pays nothing. With it set, `process_startup()` runs here:

- the doctor is installed (`autograd_doctor.install()`) as soon as the program imports
  torch; a process that never imports torch (a launcher, pip) is left alone, and torch is
  not imported early;
- an uncaught exception goes through `sys.excepthook` as usual, after the doctor has
  added its report (the error catalogue, a torch.compile failure) and dropped its own
  frames: the traceback is python's, the report is added as notes. Under torchrun, once
  the program called `init_process_group`, torch's own hook starts every line of both
  with `[rankN]: `.

So `AUTOGRAD_DOCTOR=1 torchrun ...`, `accelerate launch`, `python -m`, multiprocessing's
spawned children, Hydra apps and `srun` all run under the doctor: every Python process
they start reads the same environment. Values: `1` (or `light`) for the default mode,
`full` for the full mode (every save recorded, so reports name the line that saved the
tensor); empty or `0` for off.
"""

from __future__ import annotations

import os
import sys

VARIABLE = "AUTOGRAD_DOCTOR"
OFF = ("", "0", "false", "no", "off")

_mode: str | None = None
_started = False


def wanted_mode(value: str | None) -> str | None:
    """The doctor's mode for a value of AUTOGRAD_DOCTOR; raises ValueError for a value
    that is neither on, off nor a mode."""
    value = (value or "").strip().lower()
    if value in ("1", "true", "yes", "on", "light"):
        return "light"
    if value == "full":
        return "full"
    raise ValueError(f"{VARIABLE} must be 1, full or 0, not {value!r}")


def process_startup() -> None:
    """Called by the `.pth` line at interpreter start-up when AUTOGRAD_DOCTOR is set."""
    global _mode, _started
    value = os.environ.get(VARIABLE, "")
    if _started or value.strip().lower() in OFF:
        return
    try:
        _mode = wanted_mode(value)
    except ValueError as problem:
        print(f"autograd-doctor: {problem}; the doctor stays off", file=sys.stderr)
        return
    _started = True
    _previous_hook = sys.excepthook

    def excepthook(kind, error, traceback):
        _report_uncaught(error, _previous_hook)

    sys.excepthook = excepthook
    if "torch" in sys.modules:
        _install()
    else:
        sys.meta_path.insert(0, _InstallAfterTorch())


def _install() -> None:
    try:
        import autograd_doctor

        autograd_doctor.install(mode=_mode)
    except Exception:
        if os.environ.get("AUTOGRAD_DOCTOR_DEBUG"):
            import traceback

            traceback.print_exc()


class _InstallAfterTorch:
    """A meta path finder that lets torch be imported as usual, then installs the doctor."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)  # once, and not for the look-up below
        import importlib.util

        spec = importlib.util.find_spec(name)
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run_torch = loader.exec_module

        def exec_module(module):
            run_torch(module)
            _install()

        loader.exec_module = exec_module
        return spec


def _report_uncaught(error: BaseException, hook) -> None:
    """Add the report to an uncaught exception, then let python's hook print it."""
    try:
        if "torch" in sys.modules and not isinstance(error, KeyboardInterrupt):
            from autograd_doctor.integrations.compiled import explain_from_traceback
            from autograd_doctor.doctor import explain_error

            explain_error(error)
            explain_from_traceback(error)
        from autograd_doctor.cli.runner import print_user_traceback

        print_user_traceback(error, hook)
    except Exception:
        hook(type(error), error, error.__traceback__)


__all__ = ["process_startup", "wanted_mode", "VARIABLE"]
