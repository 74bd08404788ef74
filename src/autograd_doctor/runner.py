"""`autograd-doctor run`: run a program as `__main__` under the doctor, as python would.

Faithful to `python script.py` / `python -m module`: sys.argv, sys.path[0], the exit
code, stdin, and a traceback that shows the user's frames and not ours.
"""

from __future__ import annotations

import os
import runpy
import sys
import time
import traceback
from dataclasses import dataclass, field

from autograd_doctor.as_main import run_script

OUR_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
RUNPY_FILE = os.path.abspath(runpy.__file__)

RUN_USAGE = (
    "usage: autograd-doctor run [--json PATH] [--strict] [--silent warn|raise|ignore] "
    "[--verify-saved] [--full] [--no-rerun] [--capture patch|mode] [--verify-fix] [--diff] [--fix] "
    "(script.py | -m module) [args...]"
)


class UsageError(Exception):
    pass


@dataclass
class RunOptions:
    json_path: str | None = None
    strict: bool = False
    silent: str = "warn"
    verify_saved: bool = False
    full: bool = False  # record every save from the start (see autograd_doctor.rerun)
    rerun: bool = True
    capture: str = "patch"  # "mode": a TorchFunctionMode also sees out= writes (see watch())
    verify_fix: bool = False  # re-run a copy with the helps applied and judge it (see verify_fix.py)
    diff: bool = False  # ... and show the verified change as a unified diff
    fix: bool = False  # ... and write the verified change into the script
    graph_path: str | None = None
    html_path: str | None = None
    module: str | None = None
    script: str | None = None
    args: list[str] = field(default_factory=list)


def parse_run_args(argv: list[str]) -> RunOptions:
    options = RunOptions()
    index = 0

    def value_of(flag: str) -> str:
        nonlocal index
        if index + 1 >= len(argv):
            raise UsageError(f"{flag} needs a value")
        index += 1
        return argv[index]

    while index < len(argv):
        arg = argv[index]
        if arg in ("-h", "--help"):
            raise UsageError("help")
        if arg == "--json":
            options.json_path = value_of(arg)
        elif arg.startswith("--json="):
            options.json_path = arg.split("=", 1)[1]
        elif arg == "--graph":
            options.graph_path = value_of(arg)
        elif arg.startswith("--graph="):
            options.graph_path = arg.split("=", 1)[1]
        elif arg == "--html":
            options.html_path = value_of(arg)
        elif arg.startswith("--html="):
            options.html_path = arg.split("=", 1)[1]
        elif arg == "--strict":
            options.strict = True
        elif arg == "--verify-saved":
            options.verify_saved = True
        elif arg == "--full":
            options.full = True
        elif arg == "--no-rerun":
            options.rerun = False
        elif arg == "--verify-fix":
            options.verify_fix = True
        elif arg == "--diff":
            options.diff = True
        elif arg == "--fix":
            options.fix = True
        elif arg == "--capture" or arg.startswith("--capture="):
            capture = value_of(arg) if arg == "--capture" else arg.split("=", 1)[1]
            if capture not in ("patch", "mode"):
                raise UsageError(f"--capture must be patch or mode, not {capture!r}")
            options.capture = capture
        elif arg == "--silent" or arg.startswith("--silent="):
            policy = value_of(arg) if arg == "--silent" else arg.split("=", 1)[1]
            if policy not in ("warn", "raise", "ignore"):
                raise UsageError(f"--silent must be warn, raise or ignore, not {policy!r}")
            options.silent = policy
        elif arg == "-m":
            options.module = value_of(arg)
            options.args = argv[index + 1:]
            return options
        elif arg == "--":
            index += 1
            break
        elif arg.startswith("-"):
            raise UsageError(f"unknown option {arg}")
        else:
            break
        index += 1
    if index >= len(argv):
        raise UsageError("no script given")
    options.script = argv[index]
    options.args = argv[index + 1:]
    return options


def _check_fix_options(options: RunOptions) -> None:
    if (options.fix or options.diff or options.verify_fix) and options.module is not None:
        flag = "--fix" if options.fix else "--diff" if options.diff else "--verify-fix"
        raise UsageError(f"{flag} needs a script file, not -m module")


def _is_machinery(filename: str) -> bool:
    path = os.path.abspath(filename) if not filename.startswith("<") else filename
    return path.startswith(OUR_DIR) or path == RUNPY_FILE or filename.startswith("<frozen runpy")


def _clean(exception: traceback.TracebackException, seen: set[int]) -> None:
    if id(exception) in seen:
        return
    seen.add(id(exception))
    exception.stack = traceback.StackSummary.from_list(
        [frame for frame in exception.stack if not _is_machinery(frame.filename)])
    for chained in (exception.__cause__, exception.__context__):
        if chained is not None:
            _clean(chained, seen)


def print_user_traceback(error: BaseException) -> None:
    """The traceback python would print, without autograd-doctor's or runpy's frames."""
    try:
        formatted = traceback.TracebackException(type(error), error, error.__traceback__, compact=True)
        _clean(formatted, set())
        sys.stderr.write("".join(formatted.format()))
    except Exception:
        traceback.print_exception(type(error), error, error.__traceback__)
    sys.stderr.flush()


def _rank_suffix() -> str | None:
    rank = os.environ.get("RANK")
    if rank is not None and os.environ.get("WORLD_SIZE") not in (None, "1"):
        return rank
    return None


def _with_rank(path: str, rank: str | None) -> str:
    if rank is None:
        return path
    root, extension = os.path.splitext(path)
    return f"{root}.rank{rank}{extension}"


def _write_outputs(options: RunOptions, doctor, error: BaseException | None) -> None:
    from autograd_doctor.report.json_report import write_json_report

    report = doctor.report(error)
    rank = _rank_suffix()
    if rank is not None:
        for diagnosis in report.diagnoses:
            diagnosis.extra["rank"] = int(rank)
    if options.json_path:
        write_json_report(report, _with_rank(options.json_path, rank))
    extra_writers = []
    if options.graph_path:
        extra_writers.append(("graph", options.graph_path))
    if options.html_path:
        extra_writers.append(("html", options.html_path))
    for kind, path in extra_writers:
        try:
            from autograd_doctor.report import outputs
        except ImportError:
            print(f"autograd-doctor: --{kind} is not available in this build", file=sys.stderr)
            continue
        outputs.write(kind, report, _with_rank(path, rank), error)


def _run_module(name: str, args: list[str]) -> None:
    sys.argv = [name, *args]
    sys.path[0] = os.getcwd()
    runpy.run_module(name, run_name="__main__", alter_sys=True)


def _complete_with_full_mode(options: RunOptions, doctor, error, rank, elapsed_s: float) -> None:
    """The light mode's report lacks the save line: run once more under the full mode."""
    from autograd_doctor import rerun

    if rerun.is_child():
        rerun.save_for_parent(doctor.report(error).diagnoses)
        return
    light = rerun.wants_rerun(doctor, error) if options.rerun and rank is None else None
    if light is None:
        return
    target = ["-m", options.module] if options.module is not None else [options.script]
    try:
        rerun.complete_with_full_mode(
            doctor, error, light, rerun.run_command(["--silent", options.silent, *target, *options.args]), elapsed_s)
    except Exception:
        pass  # the light report stands


def run_command(argv: list[str]) -> int:
    try:
        options = parse_run_args(argv)
        _check_fix_options(options)
    except UsageError as problem:
        if str(problem) == "help":
            print(RUN_USAGE)
            return 0
        print(f"autograd-doctor run: error: {problem}", file=sys.stderr)
        return 2
    if options.script is not None:
        if not os.path.exists(options.script):
            print(f"autograd-doctor run: error: can't open file {options.script!r}: no such file", file=sys.stderr)
            return 2
        if os.path.isdir(options.script):
            print(f"autograd-doctor run: error: {options.script!r} is a directory, not a script", file=sys.stderr)
            return 2
    else:
        import importlib.util

        sys.path.insert(0, os.getcwd())
        try:
            found = importlib.util.find_spec(options.module)
        except (ImportError, ValueError):
            found = None
        finally:
            sys.path.pop(0)
        if found is None:
            print(f"autograd-doctor run: error: no module named {options.module!r}", file=sys.stderr)
            return 2

    from autograd_doctor.doctor import Doctor, explain_error

    rank = _rank_suffix()
    doctor = Doctor(strict=options.strict, silent=options.silent, verify_saved=options.verify_saved,
                    mode="full" if options.full else None, capture=options.capture)
    if rank is not None:
        doctor.rank = int(rank)
    exit_code = 0
    error: BaseException | None = None
    started = time.monotonic()
    doctor.start()
    capture = _start_capture()
    try:
        if options.script is not None:
            run_script(options.script, options.args)
        else:
            _run_module(options.module, options.args)
    except SystemExit as stop:
        code = stop.code
        if code is None:
            exit_code = 0
        elif isinstance(code, int):
            exit_code = code
        else:
            print(code, file=sys.stderr)
            exit_code = 1
    except SyntaxError as problem:
        doctor.stop()
        sys.stderr.write("".join(traceback.format_exception_only(type(problem), problem)))
        return 1
    except KeyboardInterrupt as interrupt:
        error = interrupt
        exit_code = 130
    except BaseException as problem:  # the user's exception: shown as python would show it
        error = problem
        exit_code = 1
        explain_error(problem)
    finally:
        if capture is not None:
            capture.finish(sys.modules["__main__"].__dict__, error)
        doctor.stop()
    if error is not None:
        # A plain torch.compile that failed on an autograd error (at compile time, with none
        # of your lines): its function runs again eagerly, after the program's doctor stopped.
        from autograd_doctor.compiled import explain_from_traceback

        explain_from_traceback(error)
    _complete_with_full_mode(options, doctor, error, rank, time.monotonic() - started)
    checked = None
    if options.verify_fix or options.diff or options.fix:
        from autograd_doctor.verify_fix import check_and_offer

        checked = check_and_offer(options, doctor, error, time.monotonic() - started)
    if error is not None:
        if rank is not None:
            # Every line says its rank, in one write, so reports of several ranks stay readable.
            import contextlib
            import io

            captured = io.StringIO()
            with contextlib.redirect_stderr(captured):
                print_user_traceback(error)
            sys.stderr.write("".join(f"[rank {rank}] {line}" for line in captured.getvalue().splitlines(True)))
            sys.stderr.flush()
        else:
            print_user_traceback(error)
    try:
        _write_outputs(options, doctor, error)
    except Exception as problem:
        print(f"autograd-doctor: could not write the report: {problem}", file=sys.stderr)
    if error is None and doctor.diagnoses:
        prefix = f"[rank {rank}] " if rank is not None else ""
        print(f"{prefix}autograd-doctor: {len(doctor.diagnoses)} problem(s) reported above", file=sys.stderr)
    if checked is not None:
        from autograd_doctor.verify_fix import show_and_write

        show_and_write(options, checked)
    return exit_code


def _start_capture():
    """In a verify child only (autograd_doctor.meaning): record the values the judge compares."""
    if not os.environ.get("AUTOGRAD_DOCTOR_CAPTURE"):
        return None
    from autograd_doctor.meaning import start_capture_if_asked

    return start_capture_if_asked()
