"""When the light mode's report lacks the line that saved the tensor, run the program
(`autograd-doctor run`) or the failing test (the pytest plugin) once more under the full
mode and use that report instead.

The light mode (the default) finds the write and the tensor from PyTorch's own version
check, but it does not record saves. Re-running is natural where the unit of work is a
script with its arguments or a test with its id. A program's re-run happens in a child
process (so the first run's state cannot leak into it), with its output discarded and
stdin closed, once (the child never re-runs), and within what the user will wait: by
default the smaller of 60 s and twice the first run's time, at least 10 s (`--rerun-limit
SECONDS` or AUTOGRAD_DOCTOR_RERUN_LIMIT change it; 0 turns the second run off). A first
run that already took longer than the limit is not run again; when the second run is
skipped or cut, the report says how to get the save line. A test's re-run
happens in pytest's own process (autograd_doctor.integrations.pytest_rerun: fresh fixtures, no new
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

from autograd_doctor.diagnosis import codes
from autograd_doctor.doctor import diagnoses_of, reattach
from autograd_doctor.diagnosis.model import Diagnosis
from autograd_doctor.recording.modes import MODE_VARIABLE, Mode

# Set in the child: where to write its diagnoses for the parent.
REPORT_VARIABLE = "AUTOGRAD_DOCTOR_RERUN_REPORT"
# The second run may take this many times the first run's time, and never longer than
# MAX_RERUN_S, unless the user set a limit (LIMIT_VARIABLE or a command-line option).
TIME_FACTOR = 2
MAX_RERUN_S = 60.0
# A fresh interpreter's start varies by seconds on a busy machine: a short first run
# still gets this long.
MIN_RERUN_S = 10.0
LIMIT_VARIABLE = "AUTOGRAD_DOCTOR_RERUN_LIMIT"


def parse_limit(text: str) -> float:
    """A limit in seconds as the user wrote it ("90", "1.5"); ValueError with a clear message."""
    try:
        limit = float(text)
    except ValueError:
        raise ValueError(f"the re-run limit must be a number of seconds, not {text!r}") from None
    if not limit >= 0 or limit == float("inf"):
        raise ValueError(f"the re-run limit must be a number of seconds (0 or more), not {text!r}")
    return limit


def limit_from_environment() -> float | None:
    """AUTOGRAD_DOCTOR_RERUN_LIMIT in seconds, or None when unset (an unreadable value
    counts as unset, with a one-line warning: the user's program must not fail for it)."""
    text = os.environ.get(LIMIT_VARIABLE, "").strip()
    if not text:
        return None
    try:
        return parse_limit(text)
    except ValueError as problem:
        print(f"autograd-doctor: {LIMIT_VARIABLE} ignored: {problem}", file=sys.stderr, flush=True)
        return None


def rerun_limit(first_run_s: float, configured_s: float | None = None) -> float:
    """How long the second run may take: what the user set (option, then environment),
    else the smaller of MAX_RERUN_S and TIME_FACTOR times the first run (at least MIN_RERUN_S)."""
    if configured_s is None:
        configured_s = limit_from_environment()
    if configured_s is not None:
        return configured_s
    return min(MAX_RERUN_S, max(MIN_RERUN_S, TIME_FACTOR * first_run_s))


def process_age_s() -> float | None:
    """Seconds since this process started (interpreter start-up and imports included: the
    second run pays them too), or None where the system does not say (Linux only)."""
    try:
        with open("/proc/self/stat") as stream:
            fields = stream.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime") as stream:
            uptime = float(stream.read().split()[0])
        return max(0.0, uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


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
    if error is None or doctor.mode is not Mode.LIGHT or is_child():
        return None
    for diagnosis in diagnoses_of(error):
        if (diagnosis.code in (codes.SAVED_TENSOR_MODIFIED, codes.OPTIMIZER_MODIFIED_SAVED)
                and diagnosis.mode is Mode.LIGHT):
            return diagnosis
    return None


def run_command(run_argv: list[str]) -> list[str]:
    """The child command that re-runs `autograd-doctor run <run_argv>` under the full mode."""
    return [sys.executable, "-m", "autograd_doctor", "run", "--full", *run_argv]


def rerun_full(command: list[str], limit: float, what: str = "the program", switch: str = "--no-rerun",
               cwd: str | None = None) -> tuple[list[Diagnosis] | None, str]:
    """Run `command` (which saves its diagnoses for the parent) in a child under the full
    mode for at most `limit` seconds; (its diagnoses, why not)."""
    print(f"autograd-doctor: running {what} again under the full mode to find where the tensor was saved "
          f"(at most {_duration(limit)}; {switch} turns this off)", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(prefix="autograd-doctor-") as folder:
        report_path = os.path.join(folder, "report.pickle")
        environment = {**os.environ, MODE_VARIABLE: Mode.FULL.value, REPORT_VARIABLE: report_path}
        try:
            subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env=environment, timeout=limit, cwd=cwd)
        except subprocess.TimeoutExpired:
            return None, f"the second run was stopped at its time limit ({_duration(limit)})"
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
                            first_run_s: float, what: str = "the program", switch: str = "--no-rerun",
                            cwd: str | None = None, limit_s: float | None = None,
                            full_hint: str = "`autograd-doctor run --full`, or AUTOGRAD_DOCTOR_MODE=full",
                            limit_option: str = "--rerun-limit") -> None:
    """Re-run within the time limit (`limit_s`, else the default from `first_run_s`), and
    swap the light diagnosis for the full one on the error and the doctor. When the
    second run is skipped or cut, the light report says how to get the save line."""
    limit = rerun_limit(first_run_s, limit_s)
    how = f"to see the line that saved the tensor, run {what} under the full mode from the start ({full_hint})"
    if limit <= 0 or first_run_s > limit:
        reason = ("the second run is turned off (a limit of 0 s)" if limit <= 0 else
                  f"{what} took {_duration(first_run_s)}, more than the {_duration(limit)} a second run may take "
                  f"({limit_option} or {LIMIT_VARIABLE} changes that)")
        light.notes.append(f"autograd-doctor did not run {what} again: {reason}; {how}")
        reattach(error, light, light)
        return
    started = time.monotonic()
    diagnoses, why_not = rerun_full(command, limit, what, switch, cwd)
    adopt_full_report(doctor, error, light, diagnoses, why_not, what, switch, time.monotonic() - started, how)


def adopt_full_report(doctor, error: BaseException, light: Diagnosis, diagnoses: list[Diagnosis] | None,
                      why_not: str, what: str, switch: str, took_s: float, how: str = "") -> None:
    """Swap the light diagnosis for the second run's diagnosis of the same failure, on the
    error and the doctor; without one, add a note to the light one saying why not (and
    `how` to get the save line)."""
    full = next((d for d in diagnoses or () if _same_failure(light, d)), None)
    if full is None:
        why_not = why_not or "the second run did not fail the same way"
        light.notes.append(f"autograd-doctor ran {what} again under the full mode to find the save line, "
                           f"but {why_not}" + (f"; {how}" if how else ""))
        reattach(error, light, light)
        return
    full.notes.append(f"autograd-doctor ran {what} a second time under the full mode to find where the tensor "
                      f"was saved (`{switch}` turns this off); it took {took_s:.1f} s")
    full.second_run = True
    full.graph_data = light.graph_data
    reattach(error, light, full)
    if light in doctor.diagnoses:
        doctor.diagnoses[doctor.diagnoses.index(light)] = full
