"""Run every correct program of the project under plain python and the doctor's modes.

A fork server: the parent imports torch (and the doctor, for the doctor's modes) once, and each
run is a forked child that runs the program as `python PROG` / `autograd-doctor run --no-rerun
[--full|--strict] PROG` would (fresh __main__, sys.argv, sys.path[0], cwd a scratch folder,
stdin /dev/null), with its output to a file. At most --jobs children at a time.

usage: python scripts/silence_sweep.py --modes plain,default,full,strict --out DIR [--only SUBSTR] [--jobs 2]
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import re
import shutil
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # this checkout
FRESH = os.path.join(REPO, "tests/bug_reports/fresh")
VARIANTS = os.path.join(REPO, "tests/errors/variants")
DIAGNOSIS = re.compile(r"\bAD\d{3}\b|AutogradDoctorWarning|^autograd-doctor", re.M)
CODE_LINE = re.compile(r"(?:warning|error)\[(AD\d{3})\][^\n]*\n\s*--> ([^\n]+)")


def programs() -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(name, program file name, [(source path, staged file name)]) of every correct program."""
    found = []
    for set_name in sorted(os.listdir(FRESH)):
        folder = os.path.join(FRESH, set_name, "correct")
        if not os.path.isdir(folder):
            continue
        for file_name in sorted(os.listdir(folder)):
            if file_name.endswith(".py"):
                found.append((f"{set_name}/{file_name[:-3]}", file_name,
                              [(os.path.join(folder, file_name), file_name)]))
    sys.path.insert(0, os.path.join(REPO, "tests/errors"))
    import held_out  # the variants' staging: the variant and its helpers, correct where they have one

    for name in held_out.variant_names():
        files = []
        for file_name in held_out.files_of(name):
            corrected = os.path.join(VARIANTS, "correct", file_name)
            files.append((corrected if os.path.exists(corrected) else os.path.join(VARIANTS, file_name),
                          file_name))
        found.append((f"variants/{name}", f"{name}.py", files))
    return found


def stage(files, directory: str) -> None:
    os.makedirs(directory, exist_ok=True)
    for source, file_name in files:
        shutil.copyfile(source, os.path.join(directory, file_name))


def child(mode: str, program: str, work: str, output: str) -> None:
    """In the forked child: run the program, never return."""
    code = 1
    try:
        os.chdir(work)
        out_fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        if mode == "plain":
            code = run_plain(program)
        else:
            from autograd_doctor.cli import main

            extra = {"default": [], "full": ["--full"], "strict": ["--strict"]}[mode]
            try:
                code = main(["run", "--no-rerun", *extra, program])
            except SystemExit as stop:
                code = exit_code_of(stop)
        try:
            atexit._run_exitfuncs()
        except BaseException:  # noqa: BLE001
            pass
    except BaseException:  # noqa: BLE001
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code if isinstance(code, int) else 1)


def exit_code_of(stop: SystemExit) -> int:
    if stop.code is None:
        return 0
    if isinstance(stop.code, int):
        return stop.code
    print(stop.code, file=sys.stderr)
    return 1


def run_plain(program: str) -> int:
    """As `python program`."""
    import builtins
    import importlib.machinery
    import traceback
    import types

    sys.argv = [program]
    sys.path[0] = os.path.dirname(os.path.realpath(program))
    main_module = types.ModuleType("__main__")
    main_module.__builtins__ = builtins
    main_module.__file__ = program
    main_module.__loader__ = importlib.machinery.SourceFileLoader("__main__", program)
    sys.modules["__main__"] = main_module
    with open(program, "rb") as stream:
        code = compile(stream.read(), program, "exec", dont_inherit=True)
    try:
        exec(code, main_module.__dict__)
    except SystemExit as stop:
        return exit_code_of(stop)
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        return 1
    return 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--modes", default="plain,default,full,strict")
    parser.add_argument("--out", required=True)
    parser.add_argument("--only", default="")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--limit", type=float, default=300.0)
    options = parser.parse_args()
    modes = options.modes.split(",")
    import torch  # noqa: F401  (imported once, before the forks)
    import torch.nn.functional  # noqa: F401
    import torch.utils.checkpoint  # noqa: F401
    import torch._dynamo  # noqa: F401  (an optimizer's constructor imports it: 10 s a run otherwise)
    try:
        import numpy  # noqa: F401
    except ImportError:
        pass
    if any(mode != "plain" for mode in modes):
        import autograd_doctor.cli  # noqa: F401
        import autograd_doctor.cli.runner  # noqa: F401
        import autograd_doctor.doctor  # noqa: F401
        print("doctor:", autograd_doctor.__file__, flush=True)
    # mode by mode (all programs in the first mode, then the next), so that a cut-off leaves
    # whole modes measured
    found = programs()
    todo = [(name, mode, file_name, files) for mode in modes for name, file_name, files in found
            if options.only in name]
    os.makedirs(options.out, exist_ok=True)
    results_path = os.path.join(options.out, "results.jsonl")
    done = set()
    if os.path.exists(results_path):
        with open(results_path, encoding="utf-8") as stream:
            for line in stream:
                row = json.loads(line)
                done.add((row["name"], row["mode"]))
    todo = [job for job in todo if (job[0], job[1]) not in done]
    print(f"{len(todo)} runs", flush=True)
    running: dict[int, tuple] = {}
    with open(results_path, "a", encoding="utf-8") as results:
        while todo or running:
            while todo and len(running) < options.jobs:
                name, mode, file_name, files = todo.pop(0)
                work = os.path.join(options.out, "work", mode, name.replace("/", "__"))
                shutil.rmtree(work, ignore_errors=True)
                stage(files, work)
                output = os.path.join(options.out, "logs", mode, name.replace("/", "__") + ".txt")
                os.makedirs(os.path.dirname(output), exist_ok=True)
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    child(mode, os.path.join(work, file_name), work, output)
                running[pid] = (name, mode, output, time.monotonic())
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                for other, (name, mode, output, started) in list(running.items()):
                    if time.monotonic() - started > options.limit:
                        os.kill(other, 9)
                time.sleep(0.05)
                continue
            name, mode, output, started = running.pop(pid)
            code = os.waitstatus_to_exitcode(status)
            with open(output, encoding="utf-8", errors="replace") as stream:
                text = stream.read()
            row = {"name": name, "mode": mode, "exit": code, "seconds": round(time.monotonic() - started, 1),
                   "said": bool(DIAGNOSIS.search(text)),
                   "codes": [f"{c} {where.strip()}" for c, where in CODE_LINE.findall(text)]}
            results.write(json.dumps(row) + "\n")
            results.flush()
            if row["said"] or code != 0:
                print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
