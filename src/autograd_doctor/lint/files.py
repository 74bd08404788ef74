"""Find the files to lint: walk directories, skip the usual build and virtualenv
folders and what `.gitignore` files exclude (a subset of gitignore syntax)."""

from __future__ import annotations

import fnmatch
import os

DEFAULT_EXCLUDE = (".venv", "venv", ".git", "build", "dist", "__pycache__", ".tox",
                   "node_modules", ".eggs", ".mypy_cache", ".pytest_cache", ".nox")


class GitIgnore:
    """Patterns of one `.gitignore`, relative to the directory holding it."""

    def __init__(self, base: str, lines: list[str]):
        self.base = base
        self.rules: list[tuple[str, bool, bool, bool]] = []  # pattern, negate, dir_only, anchored
        for raw in lines:
            line = raw.rstrip("\n").rstrip()
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            if negate:
                line = line[1:]
            if line.startswith("\\"):
                line = line[1:]
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            anchored = "/" in line
            line = line.lstrip("/")
            if line.startswith("**/"):
                line, anchored = line[3:], "/" in line[3:]
            if line:
                self.rules.append((line, negate, dir_only, anchored))

    @classmethod
    def load(cls, directory: str) -> "GitIgnore | None":
        path = os.path.join(directory, ".gitignore")
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                return cls(directory, f.readlines())
        except OSError:
            return None

    def match(self, path: str, is_dir: bool) -> bool | None:
        """True: ignored, False: re-included by `!`, None: no pattern matches."""
        rel = os.path.relpath(path, self.base).replace(os.sep, "/")
        name = rel.rsplit("/", 1)[-1]
        result = None
        for pattern, negate, dir_only, anchored in self.rules:
            if dir_only and not is_dir:
                continue
            if fnmatch.fnmatchcase(rel if anchored else name, pattern) or (
                    anchored and pattern.endswith("/**") and rel.startswith(pattern[:-2])):
                result = not negate
        return result


def is_excluded(path: str, patterns: tuple[str, ...], root: str | None = None) -> bool:
    """Match exclude patterns against the basename, and patterns with a `/`
    against the path (relative to ``root`` when walking a directory)."""
    norm = path.replace(os.sep, "/").rstrip("/")
    if root is not None:
        norm = os.path.relpath(path, root).replace(os.sep, "/")
    name = norm.rsplit("/", 1)[-1]
    for p in patterns:
        p = p.rstrip("/")
        if fnmatch.fnmatchcase(name, p):
            return True
        if "/" in p and (fnmatch.fnmatchcase(norm, p.lstrip("/")) or fnmatch.fnmatchcase(norm, p + "/*")):
            return True
    return False


def _ignored(path: str, is_dir: bool, ignores: list[GitIgnore]) -> bool:
    verdict = None
    for gi in ignores:
        m = gi.match(path, is_dir)
        if m is not None:
            verdict = m
    return bool(verdict)


def iter_python_files(root: str, exclude: tuple[str, ...], respect_gitignore: bool = True):
    """Yield ``.py``/``.pyi`` files under directory ``root`` in sorted order.

    Symlinked directories are not followed, so symlink loops cannot recurse.
    """
    ignores: list[GitIgnore] = []
    if respect_gitignore:  # .gitignore files above root still apply, up to the repo root
        parents, d = [], os.path.abspath(root)
        while True:
            parents.append(d)
            if os.path.exists(os.path.join(d, ".git")):
                break
            up = os.path.dirname(d)
            if up == d:
                parents = parents[:1]
                break
            d = up
        for d in reversed(parents[1:]):
            gi = GitIgnore.load(d)
            if gi:
                ignores.append(gi)
    stack = [(root, ignores)]
    while stack:
        directory, inherited = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        local = inherited
        if respect_gitignore:
            gi = GitIgnore.load(directory)
            if gi:
                local = inherited + [gi]
        subdirs = []
        for entry in entries:
            path = os.path.join(directory, entry.name)
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = entry.is_file()
            except OSError:
                continue
            if is_excluded(path, exclude, root) or _ignored(path, is_dir, local):
                continue
            if is_dir:
                subdirs.append((path, local))
            elif is_file and entry.name.endswith((".py", ".pyi")):
                yield path
        stack.extend(reversed(subdirs))
