"""Running the held-out variants (tests/errors/variants) under the doctor and judging the result.

Each variant raises one of the catalogue's messages through another trigger than the catalogue's
program. Its header names the message, the code of the catalogue's program for that message,
the helper files it imports (`# helpers:`), the set it belongs to (`# set:`, 1 when absent: set 1
was written before the fixes the variants led to, set 2 after them, set 3 after those) and the
values that carry its meaning (`# results:`,
expressions evaluated in the program's globals). The line to change ends with `# PRIMARY`, in the
variant or in one of its helpers. `variants/correct/` holds a hand-written correct version of
every file the fix changes: the meaning oracle. A help is right when the program with the help
applied runs and its results equal those of the correct version (forward values, gradients,
parameters after the optimizer's steps)."""

from __future__ import annotations

import os
import runpy
import shutil
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from catalogue import apply_suggestion, marked_line, run_watched  # noqa: E402

import autograd_doctor  # noqa: E402

VARIANTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "variants")
CORRECT = os.path.join(VARIANTS, "correct")


def variant_names() -> list[str]:
    return sorted(name[:-3] for name in os.listdir(VARIANTS)
                  if name.endswith(".py") and not name.startswith("lib_"))


def header(name: str) -> dict[str, str]:
    """The `# key: value` lines at the top of the variant (a value may go on over `#   ` lines)."""
    fields: dict[str, str] = {}
    key = None
    with open(os.path.join(VARIANTS, f"{name}.py"), encoding="utf-8") as stream:
        for line in stream:
            if not line.startswith("#"):
                break
            if line.startswith("#   ") and key:
                fields[key] += " " + line[4:].strip()
                continue
            key, _, value = line[2:].partition(":")
            key = key.strip()
            fields[key] = value.strip()
    return fields


def expected_code(name: str) -> str:
    return header(name)["code"].split()[0]


def files_of(name: str) -> list[str]:
    helpers = header(name).get("helpers", "")
    return [f"{name}.py"] + [helper.strip() for helper in helpers.split(",") if helper.strip()]


def stage(name: str, directory: str, correct: bool = False) -> str:
    """Copy the variant and its helpers into `directory` (the hand-written correct version of the
    files that have one when `correct`); the path of the variant's copy."""
    os.makedirs(directory, exist_ok=True)
    for file_name in files_of(name):
        source = os.path.join(CORRECT if correct and os.path.exists(os.path.join(CORRECT, file_name))
                              else VARIANTS, file_name)
        shutil.copyfile(source, os.path.join(directory, file_name))
    return os.path.join(directory, f"{name}.py")


def marked_location(name: str, directory: str) -> tuple[str, int]:
    """(path, line) of the `# PRIMARY` line in the staged copy of the variant or its helpers."""
    for file_name in files_of(name):
        path = os.path.join(directory, file_name)
        with open(path, encoding="utf-8") as stream:
            source = stream.read()
        try:
            return path, marked_line(source, "PRIMARY")
        except AssertionError:
            continue
    raise AssertionError(f"{name}: no line marked PRIMARY")


def restore_global_state(name: str) -> None:
    """Undo what a variant may leave behind: grad mode off (set_grad_enabled(False)), anomaly
    detection on, a forward-AD level left entered (enter_dual_level() without its exit), its helper modules imported from one staged copy."""
    torch.set_grad_enabled(True)
    torch.autograd.set_detect_anomaly(False)
    import torch.autograd.forward_ad as forward_ad  # a level entered with enter_dual_level() and never exited
    while forward_ad._current_level >= 0:
        forward_ad.exit_dual_level()
    for file_name in files_of(name)[1:]:
        sys.modules.pop(file_name[:-3], None)


def run_for_results(name: str, path: str):
    """(exception or None, the values named by `# results:`) of the staged program run plainly."""
    expressions = [e.strip() for e in header(name)["results"].split(",")]
    restore_global_state(name)
    try:
        namespace = runpy.run_path(path, run_name="__main__")
    except Exception as problem:  # the program's failure is what we judge
        return problem, None
    finally:
        restore_global_state(name)
    return None, [eval(expression, namespace) for expression in expressions]  # noqa: S307 (our own files)


def same_meaning(ours, reference) -> bool:
    """Equal values: tensors by value (to float rounding), modules by their parameters and their
    gradients, containers element by element, numbers to float rounding."""
    if isinstance(reference, torch.nn.Module):
        if not isinstance(ours, torch.nn.Module):
            return False
        mine, theirs = dict(ours.named_parameters()), dict(reference.named_parameters())
        return mine.keys() == theirs.keys() and all(
            same_meaning(mine[key].detach(), theirs[key].detach()) and same_meaning(mine[key].grad, theirs[key].grad)
            for key in theirs)
    if isinstance(reference, torch.Tensor) or isinstance(ours, torch.Tensor):
        if not (isinstance(reference, torch.Tensor) and isinstance(ours, torch.Tensor)):
            return False
        return (ours.shape == reference.shape and ours.dtype == reference.dtype
                and torch.allclose(ours.detach(), reference.detach(), atol=1e-6, equal_nan=True))
    if isinstance(reference, (list, tuple)):
        return (isinstance(ours, (list, tuple)) and len(ours) == len(reference)
                and all(same_meaning(a, b) for a, b in zip(ours, reference)))
    if isinstance(reference, float):
        return isinstance(ours, (int, float)) and abs(ours - reference) <= 1e-6 * max(1.0, abs(reference))
    return ours == reference


def judge(name: str, scratch: str) -> dict:
    """What the doctor does with the variant: the codes it gives, whether the expected one is
    among them, whether its primary location is the marked line, and its first concrete help
    applied: "right" (the program then computes what the correct version computes), "wrong"
    (it fails or computes something else), or "advice" (no concrete change is offered)."""
    code = expected_code(name)
    path = stage(name, os.path.join(scratch, name, "original"))
    error = run_watched(path)
    restore_global_state(name)
    diagnoses = autograd_doctor.diagnoses_of(error) if error is not None else []
    row = {"name": name, "set": header(name).get("set", "1"), "code": code, "codes": [d.code for d in diagnoses],
           "diagnosed": False, "located": False, "help": None, "why": ""}
    found = [d for d in diagnoses if d.code == code]
    if not found:
        return row
    diagnosis = found[0]
    row["diagnosed"] = True
    marked_path, marked = marked_location(name, os.path.dirname(path))
    primary = diagnosis.primary
    row["located"] = primary is not None and primary.file == marked_path and primary.line == marked
    concrete = [suggestion for suggestion in diagnosis.help if suggestion.location is not None]
    if not concrete:
        row["help"] = "advice"
        return row
    suggestion = concrete[0]
    fixed_directory = os.path.join(scratch, name, "fixed")
    fixed_path = stage(name, fixed_directory)
    target = os.path.join(fixed_directory, os.path.basename(suggestion.location.file))
    if os.path.dirname(suggestion.location.file) != os.path.dirname(path) or not os.path.exists(target):
        row["help"], row["why"] = "wrong", f"changes a file outside the program: {suggestion.location.file}"
        return row
    with open(target, encoding="utf-8") as stream:
        source = stream.read()
    with open(target, "w", encoding="utf-8") as stream:
        stream.write(apply_suggestion(source, suggestion))
    fixed_error, fixed_results = run_for_results(name, fixed_path)
    correct_error, correct_results = run_for_results(name, stage(name, os.path.join(scratch, name, "correct"),
                                                                    correct=True))
    assert correct_error is None, f"{name}: the correct version fails: {correct_error!r}"
    if fixed_error is not None:
        row["help"], row["why"] = "wrong", f"the changed program fails: {type(fixed_error).__name__}: {fixed_error}"
    elif not same_meaning(fixed_results, correct_results):
        row["help"], row["why"] = "wrong", "the changed program computes other values than the correct version"
    else:
        row["help"] = "right"
    return row
