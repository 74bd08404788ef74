"""How a report names a source file: a notebook cell as IPython names it.

IPython and ipykernel compile each cell under a file name of its own
(`<ipython-input-3-...>`, `/tmp/ipykernel_<pid>/<hash>.py`), and their tracebacks name
it by the cell's execution count: `Cell In[3], line 5`. The running shell's compiler
keeps that map (`format_code_name`); a report asks it too, so it names the cells the
user sees. Anywhere else (no IPython imported, no shell running, a file that is not a
cell) a file is named by its path.
"""

from __future__ import annotations

import sys

from autograd_doctor.diagnosis.source import shown_path


def cell_name(filename: str) -> str | None:
    """`Cell In[3]` for a cell of the running IPython shell, else None.

    Example::

        >>> cell_name("train.py") is None
        True
    """
    ipython = sys.modules.get("IPython")  # never imported here: without it, no cell
    if ipython is None:
        return None
    try:
        shell = ipython.get_ipython()
        named = shell.compile.format_code_name(filename) if shell is not None else None
    except Exception:  # an IPython without format_code_name (before 8.0), or a shell in shutdown
        return None
    if not named:
        return None
    label, name = named
    return f"{label} {name}"


def shown_file(filename: str) -> str:
    """The name of a file in a report: its cell's name, or its path (relative to the
    current directory when under it: see `shown_path`)."""
    return cell_name(filename) or shown_path(filename)


def shown_line(filename: str, line: int, column: int | None = None) -> str:
    """A position in a report: `Cell In[3], line 5` in a cell (as IPython writes it),
    else `path:line`, with `:column` (1-based) when given.

    Example::

        >>> shown_line("train.py", 12, 5)
        'train.py:12:5'
    """
    cell = cell_name(filename)
    if cell is not None:
        return f"{cell}, line {line}"
    return f"{shown_path(filename)}:{line}" + (f":{column}" if column is not None else "")


__all__ = ["cell_name", "shown_file", "shown_line"]
