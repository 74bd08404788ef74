"""When the light mode's report lacks the line that saved the tensor, run the program
(`autograd-doctor run`) or the failing test (the pytest plugin) once more under the full
mode and use that report instead.

The light mode (the default) finds the write and the tensor from PyTorch's own version
check, but it does not record saves. Re-running is natural where the unit of work is a
script with its arguments or a test with its id. A program's re-run happens in a child
process (so the first run's state cannot leak into it), with its output discarded and
stdin closed, once (the child never re-runs), and within a time limit. A test's re-run
happens in pytest's own process (autograd_doctor.pytest_rerun: fresh fixtures, no new
interpreter to start). Either report replaces the light one only when it is about the
same failure (same code, same write line): `adopt_full_report`.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile
import time

from autograd_doctor import codes
from autograd_doctor.doctor import MODE_VARIABLE, attach, diagnoses_of
from autograd_doctor.report.model import Diagnosis
from autograd_doctor.report.text import render_diagnosis

# Set in the child: where to write its diagnoses for the parent.
REPORT_VARIABLE = "AUTOGRAD_DOCTOR_RERUN_REPORT"
# The re-run may take this many times the first run's time to the failure, plus a margin.
TIME_FACTOR = 3
TIME_MARGIN_S = 30.0


def is_child() -> bool:
    return bool(os.environ.get(REPORT_VARIABLE))


def save_for_parent(diagnoses: list[Diagnosis]) -> None:
    """In the child: hand the full mode's diagnoses to the parent."""
    for diagnosis in diagnoses:
        diagnosis.graph_data = None  # pictures are drawn by the parent, from its own run
    with open(os.environ[REPORT_VARIABLE], "wb") as stream:
        pickle.dump(diagnoses, stream)


def wants_rerun(doctor, error: BaseException | None) -> Diagnosis | None:
    """The light-mode diagnosis of a stale saved tensor that a full run would complete."""
    if error is None or doctor.mode != "light" or is_child():
        return None
    for diagnosis in diagnoses_of(error):
        if (diagnosis.code in (codes.SAVED_TENSOR_MODIFIED, codes.OPTIMIZER_MODIFIED_SAVED)
                and diagnosis.extra.get("mode") == "light"):
            return diagnosis
    return None


def run_command(run_argv: list[str]) -> list[str]:
    """The child command that re-runs `autograd-doctor run <run_argv>` under the full mode."""
    return [sys.executable, "-m", "autograd_doctor", "run", "--full", *run_argv]


def rerun_full(command: list[str], elapsed_s: float, what: str = "the program", switch: str = "--no-rerun",
               cwd: str | None = None) -> tuple[list[Diagnosis] | None, str]:
    """Run `command` (which saves its diagnoses for the parent) in a child under the full
    mode; (its diagnoses, why not)."""
    limit = TIME_FACTOR * elapsed_s + TIME_MARGIN_S
    print(f"autograd-doctor: running {what} again under the full mode to find where the tensor was saved "
          f"(at most {limit:.0f} s; {switch} turns this off)", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(prefix="autograd-doctor-") as folder:
        report_path = os.path.join(folder, "report.pickle")
        environment = {**os.environ, MODE_VARIABLE: "full", REPORT_VARIABLE: report_path}
        try:
            subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env=environment, timeout=limit, cwd=cwd)
        except subprocess.TimeoutExpired:
            return None, f"the second run took longer than {limit:.0f} s"
        except OSError as problem:
            return None, f"the second run could not start ({problem})"
        if not os.path.exists(report_path):
            return None, "the second run ended without a report"
        with open(report_path, "rb") as stream:
            return pickle.load(stream), ""


def _place(diagnosis: Diagnosis, role: str) -> tuple[str, int] | None:
    location = next((loc for loc in [diagnosis.primary, *diagnosis.related] if loc is not None and loc.role == role),
                    None)
    return (location.file, location.line) if location is not None else None


def _same_failure(light: Diagnosis, full: Diagnosis) -> bool:
    """The full run's diagnosis is about the failure the light one found: the same code and
    saved slot, and the same write line, or, where the light mode saw no write (an `out=`
    write, C++ code), the same backward() line. The primary location cannot decide alone:
    without a write it is the backward() call in the light report and the save in the full one."""
    if full.code != light.code or light.primary is None:
        return False
    if (full.extra.get("node"), full.extra.get("slot")) != (light.extra.get("node"), light.extra.get("slot")):
        return False
    if _place(light, "modified") is not None:
        return _place(full, "modified") == _place(light, "modified")
    return _place(full, "backward") == _place(light, "backward")


def complete_with_full_mode(doctor, error: BaseException, light: Diagnosis, command: list[str],
                            elapsed_s: float, what: str = "the program", switch: str = "--no-rerun",
                            cwd: str | None = None) -> None:
    """Re-run, and swap the light diagnosis for the full one on the error and the doctor."""
    started = time.monotonic()
    diagnoses, why_not = rerun_full(command, elapsed_s, what, switch, cwd)
    adopt_full_report(doctor, error, light, diagnoses, why_not, what, switch, time.monotonic() - started)


def adopt_full_report(doctor, error: BaseException, light: Diagnosis, diagnoses: list[Diagnosis] | None,
                      why_not: str, what: str, switch: str, took_s: float) -> None:
    """Swap the light diagnosis for the second run's diagnosis of the same failure, on the
    error and the doctor; without one, add a note to the light one saying why not."""
    full = next((d for d in diagnoses or () if _same_failure(light, d)), None)
    if full is None:
        why_not = why_not or "the second run did not fail the same way"
        light.notes.append(f"autograd-doctor ran {what} again under the full mode to find the save line, "
                           f"but {why_not}")
        _replace_note(error, light, light)
        return
    full.notes.append(f"autograd-doctor ran {what} a second time under the full mode to find where the tensor "
                      f"was saved (`{switch}` turns this off); it took {took_s:.1f} s")
    full.extra["mode"] = "full (second run)"
    full.graph_data = light.graph_data
    _replace_note(error, light, full)
    existing = getattr(error, "__autograd_doctor__", None)
    if existing is not None:
        existing[existing.index(light)] = full
    else:
        attach(error, full)
    if light in doctor.diagnoses:
        doctor.diagnoses[doctor.diagnoses.index(light)] = full


def _replace_note(error: BaseException, old: Diagnosis, new: Diagnosis) -> None:
    """The note that `attach` added for `old` now shows `new`."""
    notes = getattr(error, "__notes__", None)
    if not notes:
        return
    old_text = "autograd-doctor:\n" + render_diagnosis(old)
    new_text = "autograd-doctor:\n" + render_diagnosis(new)
    for index, note in enumerate(notes):
        if note.startswith("autograd-doctor:\n") and note != new_text:
            # The light diagnosis was rendered before its notes changed: match by its title line.
            if note.splitlines()[1:2] == old_text.splitlines()[1:2]:
                notes[index] = new_text
                return
