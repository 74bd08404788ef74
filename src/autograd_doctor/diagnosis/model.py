"""The one report model: every output (text, JSON, pictures) renders these objects."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from autograd_doctor.recording.modes import Mode

# Renderers register here ("text" for str(diagnosis), "picture" for diagnosis.graph()), when
# the `report` package is imported, so the model itself imports none of them.
_renderers: dict[str, Callable[..., Any]] = {}


def register_renderer(kind: str, render: Callable[..., Any]) -> None:
    _renderers[kind] = render


@dataclass
class Location:
    """A place in the user's source. Lines are 1-based, columns 0-based (as in `ast`)."""

    file: str
    line: int
    column: int = 0
    end_line: int | None = None
    end_column: int | None = None
    source: str = ""
    role: str = ""
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """As the text report and `lint --format json` count: lines and columns from 1, and
        `end_column` just past the last character (1-based, exclusive)."""
        data: dict[str, Any] = {"file": self.file, "line": self.line, "column": (self.column or 0) + 1}
        if self.end_line is not None:
            data["end_line"] = self.end_line
        if self.end_column is not None:
            data["end_column"] = self.end_column + 1
        data["source"] = self.source
        if self.role:
            data["role"] = self.role
        if self.note:
            data["note"] = self.note
        return data


@dataclass
class TensorInfo:
    """The tensor a diagnosis is about, named as the user knows it."""

    name: str | None
    shape: list[int]
    dtype: str
    device: str
    version_saved: int | None = None
    version_found: int | None = None
    parameter: str | None = None

    def describe(self) -> str:
        # A tensor no variable of the user's holds (a module's intermediate output) has no name.
        label = self.parameter or self.name
        text = f"{label + ', ' if label else ''}{self.dtype}{list(self.shape)} on {self.device}"
        if self.version_saved is not None and self.version_found is not None:
            text += f", saved at version {self.version_saved}, found at version {self.version_found}"
        return text

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": self.parameter or self.name,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "device": self.device,
        }
        if self.parameter:
            data["parameter"] = self.parameter
        if self.version_saved is not None:
            data["version_saved"] = self.version_saved
        if self.version_found is not None:
            data["version_found"] = self.version_found
        return data


def help_message(index: int, message: str) -> str:
    """A help's message as shown at position `index` of its diagnosis's helps.

    Messages of alternative changes begin with "or" ("or, if you need the write itself, ...");
    whether a diagnosis has an earlier help depends on the program, so the first help drops
    the "or" rather than begin with it.

    Example::

        >>> help_message(0, "or, if both passes need the graph, pass retain_graph=True")
        'if both passes need the graph, pass retain_graph=True'
        >>> help_message(1, "or write out of place")
        'or write out of place'
    """
    if index == 0 and (message.startswith("or ") or message.startswith("or, ")):
        return message[3:].lstrip(" ,")
    return message


@dataclass
class Suggestion:
    """A change to make. `replacement` replaces the whole statement at `location`."""

    message: str
    replacement: str | None = None
    location: Location | None = None
    # True for "clone first, then write as before": right where the harm is to a saved
    # tensor, not where the write itself is the problem (a leaf, overlapping operands).
    keeps_write: bool = False
    # True for a change that computes the failing backward()'s forward pass again (its graph was
    # freed and the weights changed since): the values handed to that backward() are meant to
    # differ from the original run's stale ones, so the meaning check compares those before it.
    recomputes_failing_forward: bool = False
    # True for a change of the value the failing call is given, because that value cannot be
    # differentiated as it is (AD112: a complex loss made real): the calls before it must match the
    # original run's, that call's value may not.
    changes_failing_value: bool = False
    # True for a change that also corrects what the steps before the failing one computed, because
    # the bug it fixes already made them wrong without an error (AD185: DDP's unused-parameter search
    # takes a reentrant checkpoint's parameters for unused in every step): only the values handed to
    # the first backward() must match the original run's.
    corrects_earlier_steps: bool = False
    # True for a change to a silent problem whose wrong value is computed before any backward() (a
    # forward-mode derivative that counted a no_grad block, AD318): the values handed to the first
    # backward() are meant to differ; only the number of backward() calls must stay.
    corrects_forward_values: bool = False
    # True for a change that detaches a state carried across iterations at every iteration (the
    # program's own cut, moved into the loop of backward() and step(), AD103 set 36): later
    # backward() calls no longer go back into earlier iterations' graphs, so their gradients are
    # meant to differ from the oracle's, which goes through them at the saved weights; the values
    # handed to the failing backward() and to every call before it must match, no call dropped.
    cuts_carried_graph: bool = False
    # True for a change that deletes the statement at `location` (a replacement cannot be empty):
    # as concrete as a replacement, for a refinement that must go before the diagnosis it refines.
    deletes_statement: bool = False

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"message": self.message, "replacement": self.replacement}
        if self.location is not None:
            data["file"] = self.location.file
            data["line"] = self.location.line
            # given whenever known, one line included: without it a reader replaces the whole
            # statement at `line` (a `def` with its body), as --verify-fix does when none is known
            if self.location.end_line is not None:
                data["end_line"] = self.location.end_line
        return data


# Extra facts that front ends add once the run is over (the process's rank, the verdict of
# --verify-fix): in the JSON report they follow the mode, which is known when the diagnosis is made.
EXTRA_ADDED_AFTER_THE_RUN = ("rank", "verify")


@dataclass
class Diagnosis:
    code: str
    title: str
    severity: str  # "error" or "warning"
    primary: Location | None
    related: list[Location] = field(default_factory=list)
    tensor: TensorInfo | None = None
    notes: list[str] = field(default_factory=list)
    help: list[Suggestion] = field(default_factory=list)
    # Extra facts for pictures and tools (node, slot, rank, ...).
    extra: dict[str, Any] = field(default_factory=dict)
    # The mode of the run that found it, where the mode decides what a report can say (a stale
    # saved tensor: only the full mode knows the save line); second_run: found by the full
    # mode's re-run of the program or test (cli/rerun.py).
    mode: Mode | None = None
    second_run: bool = False
    # A plain-data snapshot of the autograd graph around the failure (diagnosis.graph_data.GraphSnapshot, taken by analysis.graph_snapshot), if any.
    graph_data: Any = field(default=None, repr=False, compare=False)

    def graph(self, max_nodes: int = 40):
        """A picture of the failing part of the graph: `.dot`, `.svg()`, shown inline in Jupyter."""
        return _renderers["picture"](self, max_nodes=max_nodes)

    def help_lines(self) -> list[str]:
        """What the JSON `help` list holds: the code to write where there is code, else the advice."""
        return [s.replacement if s.replacement else help_message(i, s.message) for i, s in enumerate(self.help)]

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "code": self.code,
            "title": self.title,
            "severity": self.severity,
            "primary": self.primary.to_dict() if self.primary else None,
            "related": [loc.to_dict() for loc in self.related],
            "tensor": self.tensor.to_dict() if self.tensor else None,
            "help": self.help_lines(),
            "help_details": [{**s.to_dict(), "message": help_message(i, s.message)} for i, s in enumerate(self.help)],
            "notes": list(self.notes),
        }
        for key, value in self.extra.items():
            if key in EXTRA_ADDED_AFTER_THE_RUN:
                self._add_mode(data)
            if key not in data and isinstance(value, (str, int, float, bool, type(None), list, dict)):
                data[key] = value
        self._add_mode(data)
        return data

    def _add_mode(self, data: dict[str, Any]) -> None:
        if self.mode is not None and "mode" not in data:
            data["mode"] = self.mode.value + (" (second run)" if self.second_run else "")

    def __str__(self) -> str:
        render = _renderers.get("text")
        return render(self) if render is not None else f"{self.severity}[{self.code}]: {self.title}"


@dataclass
class Report:
    """All diagnoses of one run, with the exception that ended it (if any)."""

    diagnoses: list[Diagnosis] = field(default_factory=list)
    exception_type: str | None = None
    exception_message: str | None = None

    def to_dict(self) -> dict[str, Any]:
        exception = None
        if self.exception_type is not None:
            exception = {"type": self.exception_type, "message": self.exception_message or ""}
        return {
            "version": 1,
            "exception": exception,
            "diagnoses": [d.to_dict() for d in self.diagnoses],
        }
