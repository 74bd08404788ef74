"""IPython / Jupyter extension: `%load_ext autograd_doctor`.

Once loaded, every cell runs under `watch()`. When a cell fails, the usual traceback
is shown (it carries the diagnosis as an exception note), followed by the diagnosis
as a rich object: the full report with the graph inline in Jupyter, one summary line
in a terminal. If anything in our handler fails, the plain traceback is shown.

Magics:
    %%autograd_doctor [--strict] [--silent raise|warn|ignore] [--verify-saved]
        run one cell under watch() with these options.
    %autograd_doctor            show the last report again
    %autograd_doctor patch      show the last report's help as a patch (never run: unverified)
    %autograd_doctor graph      draw the graph of the last failure
    %autograd_doctor on | off   watch every cell, or stop doing so
"""

from __future__ import annotations

import shlex
import sys

from autograd_doctor.doctor import Doctor, diagnoses_of, explain_error, internal_error
from autograd_doctor.recording.own_frames import hide_our_frames, without_our_frames
from autograd_doctor.report.cell_names import shown_line
from autograd_doctor.diagnosis.model import Diagnosis, Report

# Exceptions our handler sees. RuntimeError covers PyTorch's autograd errors and ours
# (AutogradDoctorError); IPython also routes parse errors through
# custom handlers, so a broader tuple would intercept SyntaxError display.
HANDLED_EXCEPTIONS = (RuntimeError,)


class DiagnosesView:
    """The diagnoses of a failed cell, for IPython's display machinery.

    Example::

        >>> view = DiagnosesView([])
        >>> repr(view)
        'autograd-doctor: no diagnosis'
    """

    def __init__(self, diagnoses: list[Diagnosis], error: BaseException | None = None,
                 picture: bool = True):
        self.diagnoses = list(diagnoses)
        self.error = error
        self.picture = picture  # False where nothing would show an SVG (a terminal)

    def report(self) -> Report:
        report = Report(diagnoses=list(self.diagnoses))
        if self.error is not None:
            report.exception_type = type(self.error).__name__
            report.exception_message = str(self.error).split("\n\nautograd-doctor:")[0]
        return report

    def __repr__(self) -> str:
        if not self.diagnoses:
            return "autograd-doctor: no diagnosis"
        lines = []
        for diagnosis in self.diagnoses:
            where = ""
            if diagnosis.primary is not None:
                where = f" at {shown_line(diagnosis.primary.file, diagnosis.primary.line)}"
            lines.append(f"autograd-doctor: {diagnosis.severity}[{diagnosis.code}]{where} (details above; "
                         "`%autograd_doctor graph` draws the graph)")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        from autograd_doctor.report.html import STYLE, render_diagnosis_html

        sections = "\n".join(render_diagnosis_html(d, i) for i, d in enumerate(self.diagnoses, start=1))
        return f'<div class="autograd-doctor"><style>{STYLE}</style>{sections}</div>'

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, str]:
        """The picture of the failure as `image/svg+xml`, next to the HTML report (which shows
        it inline too): frontends without HTML (nbconvert to PDF, some editors) pick the SVG.
        IPython takes `text/html` and `text/plain` from the methods above."""
        if not self.picture or (include is not None and "image/svg+xml" not in include):
            return {}  # do not run Graphviz for an SVG nothing would show
        for diagnosis in self.diagnoses:
            if diagnosis.graph_data is None:
                continue
            try:
                svg = diagnosis.graph()._repr_svg_()  # None without Graphviz
            except Exception:
                internal_error()
                return {}
            return {"image/svg+xml": svg} if svg else {}
        return {}


class DoctorExtension:
    """The state of the extension in one shell: the per-cell doctors and the last report."""

    def __init__(self, shell):
        self.shell = shell
        self.auto = True
        self.auto_options: dict = {}  # watch() options of every cell (%autograd_doctor full)
        self.cell_options: dict | None = None  # set by %%autograd_doctor for the cell it runs
        self._doctors: list[Doctor | None] = []
        self._previous_custom = (shell.custom_exceptions, getattr(shell, "CustomTB", None))
        self.last_error: BaseException | None = None
        self.last_diagnoses: list[Diagnosis] = []

    # ---- cell lifetime -----------------------------------------------------------

    def pre_run_cell(self, info=None) -> None:
        doctor = None
        options = self.cell_options
        self.cell_options = None
        if options is not None or self.auto:
            try:
                doctor = Doctor(**(options if options is not None else self.auto_options)).start()
            except Exception:
                internal_error()
                doctor = None
        self._doctors.append(doctor)

    def post_run_cell(self, result=None) -> None:
        if not self._doctors:
            return
        doctor = self._doctors.pop()
        if doctor is None:
            return
        doctor.stop(failed=result is not None and result.error_in_exec is not None)
        if doctor.diagnoses and (result is None or result.error_in_exec is None):
            # Problems that raised nothing (e.g. silent writes): keep them for %autograd_doctor.
            self.last_error = None
            self.last_diagnoses = list(doctor.diagnoses)

    def current_doctor(self) -> Doctor | None:
        for doctor in reversed(self._doctors):
            if doctor is not None:
                return doctor
        return None

    def stop_current(self) -> None:
        """Stop the doctor of the running cell (the %%autograd_doctor cell runs its own)."""
        for doctor in self._doctors:
            if doctor is not None:
                doctor.stop()

    # ---- failures ----------------------------------------------------------------

    def handle_exception(self, shell, etype, value, tb, tb_offset=None):
        """IPython custom exception handler: the usual traceback, then the diagnosis."""
        self.explain_compile_failure(value)
        explain_error(value)  # the error catalogue's diagnosis, shown as a note of the traceback
        hide_our_frames(value)
        try:
            shell.showtraceback((etype, value, without_our_frames(tb)), tb_offset=tb_offset)
        except Exception:
            _plain_traceback(shell, etype, value, tb, tb_offset)
            return []
        try:
            diagnoses = diagnoses_of(value)
            doctor = self.current_doctor()
            if doctor is not None:
                diagnoses += [d for d in doctor.diagnoses if d not in diagnoses]
            self.last_error = value
            self.last_diagnoses = diagnoses
            if diagnoses:
                from IPython.display import display

                from autograd_doctor.integrations.cell_patch import cell_patch

                shows_svg = "image/svg+xml" in getattr(shell.display_formatter, "active_types", ())
                display(DiagnosesView(diagnoses, value, picture=shows_svg))
                print(cell_patch(diagnoses), end="")  # the help as a diff, unverified (a cell is never re-run)
        except Exception:
            internal_error()
        return []

    def explain_compile_failure(self, error: BaseException) -> None:
        """torch.compile failed on an autograd error: run the function eagerly under the
        doctor (autograd_doctor.compiled), so the traceback shown next carries the report."""
        try:
            from autograd_doctor.integrations.compiled import explain_from_traceback, is_compile_failure

            if is_compile_failure(error):
                self.stop_current()  # the eager run has its own doctor
                explain_from_traceback(error)
        except Exception:
            internal_error()

    def install(self) -> None:
        events = self.shell.events
        events.register("pre_run_cell", self.pre_run_cell)
        events.register("post_run_cell", self.post_run_cell)
        extension = self

        def handler(shell, etype, value, tb, tb_offset=None):
            return extension.handle_exception(shell, etype, value, tb, tb_offset)

        self.shell.set_custom_exc(HANDLED_EXCEPTIONS, handler)
        self._hide_own_frames_in_every_traceback()
        self.shell.register_magic_function(self.line_magic, "line", "autograd_doctor")
        self.shell.register_magic_function(self.cell_magic, "cell", "autograd_doctor")

    def _hide_own_frames_in_every_traceback(self) -> None:
        """Any exception a watched cell raises (an IndexError through our wrapper of
        `__setitem__`, not only the RuntimeErrors our handler explains) is shown without
        our frames: IPython's traceback formatter takes them out first."""
        formatter = self.shell.InteractiveTB
        format_traceback = formatter.structured_traceback

        def structured_traceback(etype, value, *args, **kwargs):
            if isinstance(value, BaseException):
                hide_our_frames(value)
            return format_traceback(etype, value, *args, **kwargs)

        structured_traceback._autograd_doctor = True
        formatter.structured_traceback = structured_traceback

    def uninstall(self) -> None:
        formatter = self.shell.InteractiveTB
        if getattr(formatter.__dict__.get("structured_traceback"), "_autograd_doctor", False):
            del formatter.structured_traceback  # IPython's own method again
        events = self.shell.events
        for name, callback in (("pre_run_cell", self.pre_run_cell), ("post_run_cell", self.post_run_cell)):
            try:
                events.unregister(name, callback)
            except ValueError:
                pass
        while self._doctors:
            doctor = self._doctors.pop()
            if doctor is not None:
                doctor.stop()
        custom, handler = self._previous_custom
        if custom:
            self.shell.custom_exceptions = custom
            self.shell.CustomTB = handler
        else:
            self.shell.set_custom_exc((), None)

    # ---- magics ------------------------------------------------------------------

    def line_magic(self, line: str = ""):
        """%autograd_doctor [on|full|off|graph|patch]: show the last report, draw it, show its help as a
        patch, or toggle watching."""
        word = line.strip()
        if word == "on":
            self.auto, self.auto_options = True, {}
            print("autograd-doctor: watching every cell")
            return None
        if word == "full":
            self.auto, self.auto_options = True, {"mode": "full"}
            print("autograd-doctor: watching every cell in the full mode (records where tensors are saved; "
                  "%autograd_doctor on goes back to the default mode)")
            return None
        if word == "off":
            self.auto = False
            print("autograd-doctor: no longer watching every cell (%%autograd_doctor still works)")
            return None
        if not self.last_diagnoses:
            print("autograd-doctor: no diagnosis yet")
            return None
        if word == "graph":
            return self.last_diagnoses[0].graph()
        if word == "patch":
            from autograd_doctor.integrations.cell_patch import cell_patch

            print(cell_patch(self.last_diagnoses) or "autograd-doctor: the last report's helps are advice, "
                                                      "not code to patch\n", end="")
            return None
        if word:
            print(f"autograd-doctor: unknown argument {word!r} (use on, full, off, graph or patch)")
            return None
        from autograd_doctor.report.text import render_report

        print(render_report(self.last_diagnoses))
        return None

    def cell_magic(self, line: str, cell: str):
        """%%autograd_doctor [--full] [--strict] [--silent POLICY] [--verify-saved]: run this cell under watch()."""
        try:
            options = parse_magic_options(line)
        except ValueError as problem:
            print(f"autograd-doctor: {problem}", file=sys.stderr)
            return None
        self.stop_current()  # the magic's own cell does nothing worth watching
        self.cell_options = options
        try:
            self.shell.run_cell(cell, store_history=False)
        finally:
            self.cell_options = None
        return None


def parse_magic_options(line: str) -> dict:
    """watch() options from the %%autograd_doctor line.

    Example::

        >>> parse_magic_options("--strict --silent raise")
        {'strict': True, 'silent': 'raise'}
    """
    options: dict = {}
    words = shlex.split(line)
    index = 0
    while index < len(words):
        word = words[index]
        if word == "--strict":
            options["strict"] = True
        elif word == "--full":
            options["mode"] = "full"
        elif word == "--verify-saved":
            options["verify_saved"] = True
        elif word == "--silent" or word.startswith("--silent="):
            if "=" in word:
                value = word.split("=", 1)[1]
            else:
                index += 1
                if index >= len(words):
                    raise ValueError("--silent needs a value: warn, raise or ignore")
                value = words[index]
            if value not in ("warn", "raise", "ignore"):
                raise ValueError(f"--silent must be warn, raise or ignore, not {value!r}")
            options["silent"] = value
        else:
            raise ValueError(f"unknown option {word!r} (use --full, --strict, --silent POLICY, --verify-saved)")
        index += 1
    return options


def _plain_traceback(shell, etype, value, tb, tb_offset) -> None:
    try:
        stb = shell.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)
        shell._showtraceback(etype, value, stb)
    except Exception:
        import traceback

        traceback.print_exception(etype, value, tb)


_extensions: dict[int, DoctorExtension] = {}


def load_ipython_extension(ipython) -> DoctorExtension:
    """`%load_ext autograd_doctor`: watch every cell and explain autograd failures.

    Example (in IPython or Jupyter)::

        In [1]: %load_ext autograd_doctor
        In [2]: x = torch.ones(3, requires_grad=True); y = x.sigmoid(); y[0] = 0; y.sum().backward()
        ... the traceback, then error[AD101] ... with the write, the save and the fix
    """
    existing = _extensions.get(id(ipython))
    if existing is not None:
        return existing
    extension = DoctorExtension(ipython)
    extension.install()
    _extensions[id(ipython)] = extension
    return extension


def unload_ipython_extension(ipython) -> None:
    """`%unload_ext autograd_doctor`: stop watching cells and restore the exception handler."""
    extension = _extensions.pop(id(ipython), None)
    if extension is not None:
        extension.uninstall()


def extension_of(ipython) -> DoctorExtension | None:
    """The loaded extension of a shell (None if not loaded): `.last_diagnoses`, `.auto`."""
    return _extensions.get(id(ipython))


__all__ = ["load_ipython_extension", "unload_ipython_extension", "extension_of", "DiagnosesView",
           "DoctorExtension", "parse_magic_options"]
