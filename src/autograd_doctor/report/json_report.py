"""The JSON report (`--json PATH`): the shape in the design notes, extended, never broken."""

from __future__ import annotations

import json
import os
import tempfile

from autograd_doctor.diagnosis.model import Report


def write_json_report(report: Report, path: str) -> None:
    text = json.dumps(report.to_dict(), indent=2, default=str)
    directory = os.path.dirname(os.path.abspath(path)) or "."
    os.makedirs(directory, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".autograd-doctor-", suffix=".json")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text + "\n")
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
