"""The help of a failed notebook cell as a patch: the changed cell (or the changed file of yours
that the cell calls) as a unified diff, always *unverified*.

`autograd-doctor run --diff` and `pytest --autograd-doctor-patch` check a help by running the
program again from its start, under the oracle and changed, and comparing the two. A cell cannot
be run that way: it runs on the kernel's state (what earlier cells made, and what the failed cell
itself changed before it raised), which a copy cannot rebuild; running it again in the kernel
would change the user's variables. So nothing is run here, and the verdict says so and names the
two ways to check the change. The same holds for a help in a `.py` file the notebook imports: the
failing call comes from the notebook.
"""

from __future__ import annotations

import difflib
import linecache
import os

from autograd_doctor.diagnosis.source import shown_path
from autograd_doctor.report.cell_names import cell_name

NOT_RUN_CHECKS = "check it as a script or a test: `autograd-doctor run --diff`, `pytest --autograd-doctor-patch`"


def cell_patch(diagnoses: list) -> str:
    """The first help with code in a cell or a file of yours, as patch text ending with the
    verdict line; "" when no help is such code."""
    from autograd_doctor.cli.meaning import Verdict
    from autograd_doctor.cli.verify_fix import apply_help, library_dirs

    libraries = library_dirs()
    for diagnosis in diagnoses:
        for suggestion in diagnosis.help:
            location = suggestion.location
            if not suggestion.replacement or location is None:
                continue
            cell = cell_name(location.file)
            if cell is None and any(os.path.realpath(location.file).startswith(d) for d in libraries):
                continue  # installed code is never edited
            source = "".join(linecache.getlines(location.file))
            if not source:
                continue
            changed, _ = apply_help(source, location, suggestion.replacement, diagnosis.code, suggestion.message)
            name = cell or shown_path(location.file)
            diff = "".join(difflib.unified_diff(source.splitlines(True), changed.splitlines(True),
                                                f"a/{name}", f"b/{name}"))
            if cell is not None:
                why = ("the cell runs on the kernel's state (what earlier cells made, and what this cell changed "
                       "before it failed), which a copy cannot rebuild, so the changed cell was not run; "
                       + NOT_RUN_CHECKS)
            else:
                why = (f"the failing call comes from this notebook, whose state a copy cannot rebuild, so the "
                       f"changed {name} was not run; " + NOT_RUN_CHECKS)
            return (f"autograd-doctor: the help as a patch of {name}:\n{diff}"
                    + ("" if diff.endswith("\n") else "\n") + Verdict("unverified", why).line() + "\n")
    return ""
