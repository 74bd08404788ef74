"""`autograd-doctor run`: run a program as `__main__` under the doctor, as python would.

Faithful to `python script.py` / `python -m module`: sys.argv, sys.path[0], the exit
code, stdin, and a traceback that shows the user's frames and not ours.
"""

from __future__ import annotations

import atexit
import os
import runpy
import signal
import sys
import time
import traceback
from dataclasses import dataclass, field

from autograd_doctor.cli.as_main import fresh_main_module, run_script
from autograd_doctor.recording.own_frames import hide_our_frames
from autograd_doctor.report.text import render_diagnosis

RUN_USAGE = """\
usage: autograd-doctor run [options] script.py [args...]
       autograd-doctor run [options] -m module [args...]

Run a program as `python script.py args` (or `python -m module args`) would, under the
doctor; when it fails, the traceback is python's and the report is added to it.

options:
  --json PATH           also write the report as JSON (under torchrun: PATH.rankN.json per rank)
  --graph PATH          draw the failing part of the autograd graph (.dot; .svg/.png/.pdf with Graphviz)
  --html PATH           write one self-contained HTML page: diagnoses, marked source, the picture
  --strict              raise at backward(), before the engine runs, when it would read a saved tensor
                        modified in place (a graph never backpropagated fails nothing)
  --silent POLICY       warn (default), raise or ignore problems PyTorch does not raise for
  --verify-saved        fingerprint saved tensors to catch writes no hook sees (NumPy, DLPack, kernels)
  --full                record every save from the start (names the line that saved the tensor)
  --no-rerun            do not run the program a second time under --full to add the save line
  --rerun-limit SECONDS at most this long for that second run (default: the smaller of 60 s and
                        twice the first run, at least 10 s; 0 turns it off; AUTOGRAD_DOCTOR_RERUN_LIMIT)
  --capture METHOD      patch (default): wrap torch's in-place functions; mode: also see out= writes
  --verify-fix          apply the helps to a scratch copy of the script, run it and compare its values
                        and gradients with an oracle's: verified, unverified (and why) or wrong
  --diff                --verify-fix, then print the verified change(s) as a unified diff
  --fix                 --verify-fix, then write the verified change(s) into the script (atomically)
  -m MODULE             run a module as __main__ (as python -m); what follows is its arguments
  -h, --help            show this help and exit

Set AUTOGRAD_DOCTOR=1 (or full) instead to turn the doctor on in every Python process a
launcher starts (torchrun, accelerate launch, multiprocessing): see docs/integrations.md.
"""


class UsageError(Exception):
    pass


@dataclass
class RunOptions:
    json_path: str | None = None
    strict: bool = False
    silent: str = "warn"
    verify_saved: bool = False
    full: bool = False  # record every save from the start (see autograd_doctor.cli.rerun)
    rerun: bool = True
    rerun_limit_s: float | None = None  # None: the default (see autograd_doctor.cli.rerun)
    capture: str = "patch"  # "mode": a TorchFunctionMode also sees out= writes (see watch())
    verify_fix: bool = False  # re-run a copy with the helps applied and judge it (see verify_fix.py)
    diff: bool = False  # ... and show the verified change as a unified diff
    fix: bool = False  # ... and write the verified change into the script
    graph_path: str | None = None
    html_path: str | None = None
    module: str | None = None
    script: str | None = None
    args: list[str] = field(default_factory=list)


def _choice(flag: str, allowed: tuple[str, ...]):
    def check(text: str) -> str:
        if text not in allowed:
            raise UsageError(f"{flag} must be {', '.join(allowed[:-1])} or {allowed[-1]}, not {text!r}")
        return text
    return check


def _rerun_limit(text: str) -> float:
    from autograd_doctor.cli.rerun import parse_limit

    try:
        return parse_limit(text)
    except ValueError as problem:
        raise UsageError(f"--rerun-limit: {problem}") from None


# Options that are switched on by their name alone: option -> (RunOptions field, value).
SWITCHES = {
    "--strict": ("strict", True), "--verify-saved": ("verify_saved", True), "--full": ("full", True),
    "--no-rerun": ("rerun", False), "--verify-fix": ("verify_fix", True), "--diff": ("diff", True),
    "--fix": ("fix", True),
}
# Options that take a value, as `--opt VALUE` or `--opt=VALUE`: option -> (field, conversion).
VALUED = {
    "--json": ("json_path", str), "--graph": ("graph_path", str), "--html": ("html_path", str),
    "--rerun-limit": ("rerun_limit_s", _rerun_limit),
    "--capture": ("capture", _choice("--capture", ("patch", "mode"))),
    "--silent": ("silent", _choice("--silent", ("warn", "raise", "ignore"))),
}


def parse_run_args(argv: list[str]) -> RunOptions:
    """The options before the script (or `-m module`); everything after it is the program's own
    arguments, as with `python`. Hand-written because argparse cannot stop at the first
    positional argument and leave the rest untouched."""
    options = RunOptions()
    index = 0
    while index < len(argv):
        arg = argv[index]
        name, has_value, inline_value = arg.partition("=")
        if arg in ("-h", "--help"):
            raise UsageError("help")
        if arg in SWITCHES:
            field_name, value = SWITCHES[arg]
            setattr(options, field_name, value)
        elif name in VALUED:
            field_name, convert = VALUED[name]
            if not has_value:
                if index + 1 >= len(argv):
                    raise UsageError(f"{name} needs a value")
                index += 1
                inline_value = argv[index]
            setattr(options, field_name, convert(inline_value))
        elif arg == "-m":
            if index + 1 >= len(argv):
                raise UsageError("-m needs a value")
            options.module = argv[index + 1]
            options.args = argv[index + 2:]
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


def print_user_traceback(error: BaseException, excepthook=None) -> None:
    """Print `error` as python would for an uncaught exception (through `sys.excepthook`, so
    a program's own hook still runs), without autograd-doctor's frames; the report is
    in the exception's notes."""
    hide_our_frames(error)
    try:
        (excepthook or sys.excepthook)(type(error), error, error.__traceback__)
    except Exception:
        traceback.print_exception(type(error), error, error.__traceback__)
    sys.stderr.flush()


def print_traceback_with_rank(error: BaseException, rank: str, excepthook=None) -> None:
    """The traceback as python prints it, in one write so that ranks do not interleave;
    each line of the report (the doctor's notes) starts with `[rank N] `, unless the hook
    already labelled every line (torch's, once `init_process_group` ran: `[rankN]: `)."""
    import contextlib
    import io

    captured = io.StringIO()
    with contextlib.redirect_stderr(captured):
        print_user_traceback(error, excepthook)
    text = captured.getvalue()
    for note in _our_notes(error):
        text = text.replace(note, "".join(f"[rank {rank}] {line}" for line in note.splitlines(True)), 1)
    sys.stderr.write(text)
    sys.stderr.flush()


def _our_notes(error: BaseException) -> list[str]:
    """The doctor's notes on `error` and on the exceptions chained to it."""
    notes, pending, seen = [], [error], set()
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        notes.extend(note for note in getattr(current, "__notes__", None) or ()
                     if isinstance(note, str) and note.startswith("autograd-doctor:"))
        pending.extend((current.__cause__, current.__context__))
    return notes


def rank_of_process() -> str | None:
    """This process's rank under torchrun (RANK set, WORLD_SIZE above 1), else None."""
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
    rank = rank_of_process()
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
    """As `python -m name args`, with the same function python uses (runpy's
    `_run_module_as_main`): its frames are in python's tracebacks too."""
    sys.argv = ["-m", *args]
    sys.path[0] = os.getcwd()
    fresh_main_module()
    run_as_main = getattr(runpy, "_run_module_as_main", None)
    if run_as_main is not None:
        run_as_main(name, alter_argv=True)
    else:
        sys.argv[0] = name
        runpy.run_module(name, run_name="__main__", alter_sys=True)


def _complete_with_full_mode(options: RunOptions, doctor, error, rank, elapsed_s: float) -> None:
    """The light mode's report lacks the save line: run once more under the full mode."""
    from autograd_doctor.cli import rerun

    if rerun.is_child():
        rerun.save_for_parent(doctor.report(error).diagnoses)
        return
    light = rerun.wants_rerun(doctor, error) if options.rerun and rank is None else None
    if light is None:
        return
    target = ["-m", options.module] if options.module is not None else [options.script]
    # The second run starts a fresh interpreter and imports torch again: what the user
    # waited for is the whole process so far, not only the program's own part.
    first_run_s = max(elapsed_s, rerun.process_age_s() or 0.0)
    try:
        rerun.complete_with_full_mode(
            doctor, error, light, rerun.run_command(["--silent", options.silent, *target, *options.args]),
            first_run_s, limit_s=options.rerun_limit_s)
    except Exception:
        pass  # the light report stands


_interrupted = False


def _system_exit_code(stop: SystemExit) -> int:
    """What python exits with for an uncaught SystemExit (printing a non-int code)."""
    code = stop.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _exit_like_python_after_keyboard_interrupt() -> None:
    """python ends a program stopped by an uncaught KeyboardInterrupt by killing itself
    with SIGINT once the atexit handlers ran, so that its parent sees the signal."""
    if not _interrupted or os.name != "posix":
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)


def run_command(argv: list[str]) -> int:
    try:
        options = parse_run_args(argv)
        _check_fix_options(options)
    except UsageError as problem:
        if str(problem) == "help":
            print(RUN_USAGE, end="")
            return 0
        print(f"autograd-doctor run: error: {problem}", file=sys.stderr)
        return 2
    problem = _missing_target(options)
    if problem is not None:
        print(f"autograd-doctor run: error: {problem}", file=sys.stderr)
        return 2

    from autograd_doctor.doctor import Doctor

    rank = rank_of_process()
    doctor = Doctor(strict=options.strict, silent=options.silent, verify_saved=options.verify_saved,
                    mode="full" if options.full else None, capture=options.capture)
    if rank is not None:
        doctor.rank = int(rank)
    started = time.monotonic()
    exit_code, error = _run_program(options, doctor)
    _report(options, doctor, error, rank, started)
    return exit_code


def _missing_target(options: RunOptions) -> str | None:
    """Why the script or module cannot be run, as python would say it; None when it can."""
    if options.script is not None:
        if not os.path.exists(options.script):
            return f"can't open file {options.script!r}: no such file"
        if os.path.isdir(options.script):
            return f"{options.script!r} is a directory, not a script"
        return None
    import importlib.util

    sys.path.insert(0, os.getcwd())
    try:
        found = importlib.util.find_spec(options.module)
    except (ImportError, ValueError):
        found = None
    finally:
        sys.path.pop(0)
    return f"no module named {options.module!r}" if found is None else None


def _run_program(options: RunOptions, doctor) -> tuple[int, BaseException | None]:
    """Run the program under `doctor`: (its exit code, the exception that ended it or None)."""
    global _interrupted
    from autograd_doctor.doctor import explain_error

    exit_code = 0
    error: BaseException | None = None
    # Registered before the program's own handlers, so it runs after them (atexit is LIFO).
    atexit.unregister(_exit_like_python_after_keyboard_interrupt)
    atexit.register(_exit_like_python_after_keyboard_interrupt)
    doctor.start()
    capture = _start_capture()
    try:
        if options.script is not None:
            run_script(options.script, options.args)
        else:
            _run_module(options.module, options.args)
    except SystemExit as stop:
        exit_code = _system_exit_code(stop)
    except BaseException as problem:  # the user's exception: shown as python would show it
        error = problem
        exit_code = 1
        if isinstance(problem, KeyboardInterrupt):
            _interrupted = True
        else:
            explain_error(problem)
    finally:
        if capture is not None:
            capture.finish(sys.modules["__main__"].__dict__, error)
        doctor.stop(failed=error is not None)
    return exit_code, error


def _report(options: RunOptions, doctor, error: BaseException | None, rank: str | None, started: float) -> None:
    """After the program: complete the report (torch.compile, the full mode's second run, the
    checked helps), print the traceback as python would, write the outputs asked for."""
    if error is not None:
        # A plain torch.compile that failed on an autograd error (at compile time, with none
        # of your lines): its function runs again eagerly, after the program's doctor stopped.
        from autograd_doctor.integrations.compiled import explain_from_traceback

        explain_from_traceback(error)
    _complete_with_full_mode(options, doctor, error, rank, time.monotonic() - started)
    checked = None
    if options.verify_fix or options.diff or options.fix:
        from autograd_doctor.cli.verify_fix import check_and_offer

        checked = check_and_offer(options, doctor, error, time.monotonic() - started)
    if error is not None:
        if rank is not None:
            print_traceback_with_rank(error, rank)
        else:
            print_user_traceback(error)
    try:
        _write_outputs(options, doctor, error)
    except Exception as problem:
        print(f"autograd-doctor: could not write the report: {problem}", file=sys.stderr)
    if error is None and doctor.diagnoses:
        prefix = f"[rank {rank}] " if rank is not None else ""
        for diagnosis in getattr(doctor, "hidden_warnings", ()):
            print(f"{prefix}autograd-doctor: the program's warning filters hid this warning:\n"
                  f"{render_diagnosis(diagnosis)}", file=sys.stderr)
        print(f"{prefix}autograd-doctor: {len(doctor.diagnoses)} problem(s) reported above", file=sys.stderr)
    if checked is not None:
        from autograd_doctor.cli.verify_fix import show_and_write

        show_and_write(options, checked)


def _start_capture():
    """In a verify child only (autograd_doctor.cli.meaning): record the values the judge compares."""
    if not os.environ.get("AUTOGRAD_DOCTOR_CAPTURE"):
        return None
    from autograd_doctor.cli.meaning import start_capture_if_asked

    return start_capture_if_asked()
