"""`[tool.autograd-doctor]` in pyproject.toml: select, ignore, exclude, extend-exclude."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

try:
    import tomllib
except ImportError:  # Python 3.10: configuration files are ignored
    tomllib = None

KEYS = ("select", "ignore", "exclude", "extend-exclude")


class ConfigError(Exception):
    pass


@dataclass
class Config:
    path: str | None = None
    values: dict = field(default_factory=dict)


def find_pyproject(starts: list[str]) -> str | None:
    """The nearest pyproject.toml with a `[tool.autograd-doctor]` table, walking up
    from each start directory in turn (the linted paths first, then the cwd)."""
    for start in starts:
        d = os.path.abspath(start)
        if not os.path.isdir(d):
            d = os.path.dirname(d)
        while True:
            candidate = os.path.join(d, "pyproject.toml")
            if os.path.isfile(candidate) and _has_section(candidate):
                return candidate
            up = os.path.dirname(d)
            if up == d:
                break
            d = up
    return None


def _has_section(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return b"[tool.autograd-doctor" in f.read()
    except OSError:
        return False


def load_config(path: str | None) -> Config:
    if path is None or tomllib is None:
        return Config()
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror}") from e
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"invalid TOML in {path}: {e}") from e
    table = data.get("tool", {}).get("autograd-doctor", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.autograd-doctor] must be a table")
    values = {}
    for key, value in table.items():
        if key not in KEYS:
            raise ConfigError(f"{path}: unknown key {key!r} in [tool.autograd-doctor] "
                              f"(expected one of {', '.join(KEYS)})")
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{path}: {key} must be a list of strings")
        values[key] = value
    return Config(path, values)
