"""diagnosis.source.class_definition: the `class` statement that made a class, found through the
files its own functions were compiled from, not through `sys.modules[cls.__module__]`."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import sys
import textwrap

import torch

from autograd_doctor.diagnosis.source import class_definition


def _load(tmp_path, name: str, text: str, module_name: str) -> dict:
    """Run `text` as the file `name`, with `__name__` set to `module_name` (as a runner or a
    notebook kernel does for `__main__`), and return its globals."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    namespace = {"__name__": module_name, "__file__": str(path)}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace


def test_a_class_whose_module_is_another_programs_main_is_found_in_its_own_file(tmp_path):
    """`__main__` in sys.modules is pytest's here, as it is the kernel's in a notebook: inspect
    answers that module's file, which has no such class."""
    namespace = _load(tmp_path, "script.py", """
        import torch


        class Memory(torch.nn.Module):
            def forward(self, x):
                return x
    """, "__main__")
    memory = namespace["Memory"]
    try:
        wrong = inspect.getsourcefile(memory)
    except (TypeError, OSError):  # OSError where `__main__` has no `__file__`
        wrong = None
    assert wrong != str(tmp_path / "script.py")  # what the doctor read before
    filename, statement = class_definition(memory)
    assert filename == str(tmp_path / "script.py")
    assert statement.name == "Memory" and statement.lineno == 5


def test_two_classes_of_one_name_in_a_file_give_the_one_that_made_the_class(tmp_path):
    namespace = _load(tmp_path, "blocks.py", """
        def first():
            class Block:
                def forward(self):
                    return 1
            return Block


        def second():
            class Block:
                def forward(self):
                    return 2
            return Block
    """, "blocks")
    assert class_definition(namespace["second"]())[1].lineno == 10
    assert class_definition(namespace["first"]())[1].lineno == 3


def test_a_decorated_method_leads_to_the_users_file_not_the_decorators(tmp_path):
    namespace = _load(tmp_path, "decorated.py", """
        import torch


        class Frozen(torch.nn.Module):
            @torch.no_grad()
            def forward(self, x):
                return x

            @staticmethod
            def helper():
                return 0
    """, "__main__")
    forward = vars(namespace["Frozen"])["forward"]
    assert forward.__code__.co_filename != str(tmp_path / "decorated.py")  # torch's wrapper
    assert class_definition(namespace["Frozen"])[0] == str(tmp_path / "decorated.py")


def test_a_function_assigned_from_elsewhere_is_not_taken_for_the_classes_own(tmp_path):
    """`Model.forward = shared_forward`: that function's file is where it was written, which holds
    no such class; the class's own method decides."""
    shared = _load(tmp_path, "shared.py", """
        def shared_forward(self, x):
            return x
    """, "shared")
    namespace = _load(tmp_path, "model.py", """
        class Model:
            forward = None  # set below, before `own` in the class's dict

            def own(self):
                return 0
    """, "__main__")
    model = namespace["Model"]
    model.forward = shared["shared_forward"]
    filename, statement = class_definition(model)
    assert filename == str(tmp_path / "model.py") and statement.name == "Model"


def test_a_dataclass_of_fields_only_falls_back_to_its_modules_file():
    @dataclasses.dataclass
    class Record:
        loss: torch.Tensor

    filename, statement = class_definition(Record)
    assert filename == __file__ and statement.name == "Record"


def test_a_class_made_without_source_gives_none():
    made = type("Made", (), {"run": functools.partial(print)})
    assert class_definition(made) is None
    assert class_definition(torch.nn.Linear)[0] == sys.modules["torch.nn.modules.linear"].__file__
