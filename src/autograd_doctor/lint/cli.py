"""`autograd-doctor lint [options] PATH...`: parse, lint, print."""

from __future__ import annotations

import argparse
import io
import os
import tokenize
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from autograd_doctor.lint import formats
from autograd_doctor.lint.config import ConfigError, find_pyproject, load_config
from autograd_doctor.lint.engine import Selection, lint_file, lint_source
from autograd_doctor.lint.files import DEFAULT_EXCLUDE, is_excluded, iter_python_files
from autograd_doctor.lint.fixes import fix_source, unified_diff, write_atomically
from autograd_doctor.lint.rules import ALL_RULES

PROG = "autograd-doctor lint"
FORMATS = ("text", "concise", "json", "sarif", "github")


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="Find autograd hazards in Python source without running it.")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="files or directories to lint (none: nothing to do, exit 0)")
    p.add_argument("--select", metavar="CODES", help="comma-separated codes or prefixes to report (default ADL)")
    p.add_argument("--ignore", metavar="CODES", help="comma-separated codes or prefixes not to report")
    p.add_argument("--exclude", metavar="PATTERNS",
                   help="comma-separated glob patterns replacing the default excludes")
    p.add_argument("--extend-exclude", metavar="PATTERNS", help="patterns excluded in addition")
    p.add_argument("--force-exclude", action="store_true",
                   help="apply excludes to files named on the command line too (for pre-commit)")
    p.add_argument("--no-gitignore", action="store_true", help="do not read .gitignore files")
    p.add_argument("--fix", action="store_true", help="apply safe fixes")
    p.add_argument("--unsafe-fixes", action="store_true",
                   help="with --fix or --diff, also apply fixes that may change meaning")
    p.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    p.add_argument("--format", choices=FORMATS, default="text", help="output format (default text)")
    p.add_argument("-j", "--jobs", type=int, default=1, metavar="N", help="lint N files in parallel")
    p.add_argument("--config", metavar="FILE", help="read [tool.autograd-doctor] from this pyproject.toml")
    p.add_argument("--isolated", action="store_true", help="ignore all configuration files")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    p.add_argument("-q", "--quiet", action="store_true", help="text format: no summary line")
    p.add_argument("--list-rules", action="store_true", help="print the rule codes and exit")
    return p


@dataclass(frozen=True)
class Job:
    path: str
    selection: Selection
    mode: str          # "lint", "fix" or "diff"
    unsafe: bool


def _split(value) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list) else value.split(",")
    return [v.strip() for v in items if v.strip()]


def _codes(values: list[str], option: str) -> tuple[str, ...]:
    known = [r.code for r in ALL_RULES]
    out = []
    for v in values:
        v = v.upper()
        if v != "ALL" and not any(code.startswith(v) for code in known):
            raise UsageError(f"{option}: unknown rule code or prefix {v!r}")
        out.append(v)
    return tuple(out)


def run_job(job: Job):
    """Lint (and maybe fix) one file.  Runs in worker processes with -j."""
    findings, source = lint_file(job.path, job.path, job.selection)
    if job.mode == "lint" or source is None or not any(f.fix for f in findings):
        return findings, source, 0, ""
    fixed, count = fix_source(source, lambda text: lint_source(text, job.path, job.selection),
                              job.unsafe)
    if fixed == source:
        return findings, source, 0, ""
    if job.mode == "diff":
        return findings, source, count, unified_diff(job.path, source, fixed)
    with open(job.path, "rb") as f:
        raw = f.read()
    encoding = tokenize.detect_encoding(io.BytesIO(raw).readline)[0]
    if encoding == "utf-8-sig":
        fixed = "\ufeff" + fixed
    write_atomically(job.path, fixed, encoding="utf-8" if encoding == "utf-8-sig" else encoding)
    remaining = lint_source(fixed, job.path, job.selection)
    return remaining, fixed, count, ""


def collect_files(paths, exclude, force_exclude, gitignore) -> list[str]:
    files, seen = [], set()
    for path in paths:
        if os.path.isdir(path):
            candidates = iter_python_files(path, exclude, gitignore)
        else:
            parts = os.path.normpath(path).split(os.sep)
            if force_exclude and any(is_excluded(os.sep.join(parts[:i + 1]), exclude)
                                     for i in range(len(parts))):
                continue
            candidates = [path]
        for c in candidates:
            key = os.path.realpath(c)
            if key not in seen:
                seen.add(key)
                files.append(c)
    return files


def lint_main(argv: list[str]) -> int:
    """Entry point of `autograd-doctor lint`; returns the exit code."""
    try:
        return _lint_main(argv)
    except UsageError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`autograd-doctor lint . | head -1`): stop quietly.
        # Output still buffered would fail again when Python flushes stdout at
        # exit, so stdout now points at /dev/null; exit 1, as Python's
        # documentation recommends for EPIPE.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


def _lint_main(argv: list[str]) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:  # -h / --help
        return int(e.code or 0)
    if args.list_rules:
        for r in ALL_RULES:
            print(f"{r.code}  {r.name:36}  {'' if r.default else '(opt-in) '}{r.summary}")
        return 0
    if args.jobs < 1:
        raise UsageError("-j/--jobs must be at least 1")
    for path in args.paths:
        if not os.path.exists(path):
            raise UsageError(f"path not found: {path}")
    if not args.paths:
        return 0  # e.g. pre-commit with no matching files: nothing to do
    try:
        config_path = None if args.isolated else (
            args.config or find_pyproject(list(args.paths) + [os.getcwd()]))
        if args.config and not os.path.isfile(args.config):
            raise UsageError(f"config file not found: {args.config}")
        config = load_config(config_path).values
    except ConfigError as e:
        raise UsageError(str(e)) from None

    select = _codes(_split(args.select) or config.get("select") or ["ADL"], "--select")
    ignore = _codes(_split(args.ignore) + list(config.get("ignore", [])), "--ignore")
    exclude = tuple(_split(args.exclude) or config.get("exclude") or DEFAULT_EXCLUDE) + \
        tuple(config.get("extend-exclude", [])) + tuple(_split(args.extend_exclude))
    selection = Selection(select, ignore)
    mode = "diff" if args.diff else "fix" if args.fix else "lint"
    files = collect_files(args.paths, exclude, args.force_exclude, not args.no_gitignore)
    jobs = [Job(f, selection, mode, args.unsafe_fixes) for f in files]
    if args.jobs > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            results = list(pool.map(run_job, jobs, chunksize=max(1, len(jobs) // (args.jobs * 4))))
    else:
        results = [run_job(j) for j in jobs]

    findings, sources, fixed, diffs = [], {}, 0, []
    for job, (file_findings, source, count, diff) in zip(jobs, results):
        findings += file_findings
        if source is not None:
            sources[job.path] = source
        fixed += count
        if diff:
            diffs.append(diff)
    if mode == "diff":
        sys.stdout.write("".join(diffs))
        if not args.quiet:
            print(f"Would fix {fixed} finding{'s' * (fixed != 1)}.", file=sys.stderr)
        return 1 if diffs and not args.exit_zero else 0

    out = sys.stdout
    if args.format in ("text", "concise"):
        out.write(formats.render_text(findings, sources, concise=args.format == "concise"))
        if not args.quiet:
            out.write(formats.summary(findings, fixed))
    elif args.format == "json":
        out.write(formats.render_json(findings))
    elif args.format == "sarif":
        out.write(formats.render_sarif(findings, _version()))
    else:
        out.write(formats.render_github(findings))
    return 1 if findings and not args.exit_zero else 0


def _version() -> str:
    try:
        from importlib.metadata import version
        return version("autograd-doctor")
    except Exception:  # noqa: BLE001 - running from a source tree
        return "0.0.0"


def main() -> int:  # python -m autograd_doctor.lint.cli
    return lint_main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
