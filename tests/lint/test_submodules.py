"""A forward()'s arguments carry a graph only when the repository builds its class
as another module's part (lint/submodules.py).  Each claim is checked with torch:
the model that scripts feed data batches runs and backpropagates; built after a
layer, the same forward fails in backward."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import textwrap

import pytest
import torch
import torch.nn as nn

from autograd_doctor.lint.engine import lint_file

MODEL = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def forward(self, x_enc):
            x_enc = x_enc - x_enc.mean(1, keepdim=True)
            stdev = torch.sqrt(torch.var(x_enc, dim=1, keepdim=True) + 1e-5)
            x_enc /= stdev
            return self.fc(x_enc)
    """)

SCRIPT = textwrap.dedent("""\
    import torch
    from models.normalised import Model

    model = Model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for batch in torch.randn(3, 5, 4):
        opt.zero_grad()
        model(batch).sum().backward()
        opt.step()
    """)

AS_PART = textwrap.dedent("""\
    import torch.nn as nn
    from models.normalised import Model


    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Linear(4, 4)
            self.head = Model()

        def forward(self, x):
            return self.head(self.embed(x))
    """)

SUBCLASS = textwrap.dedent("""\
    import torch.nn as nn
    from models.normalised import Model


    class Tuned(Model):
        pass


    def build():
        return nn.Sequential(nn.Linear(4, 4), Tuned())
    """)


def repository(tmp_path, **files):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "__init__.py").write_text("")
    (tmp_path / "models" / "normalised.py").write_text(MODEL)
    for name, text in files.items():
        (tmp_path / f"{name}.py").write_text(text)
    return tmp_path


def adl001_lines(path) -> list[int]:
    return [f.line for f in lint_file(str(path))[0] if f.code == "ADL001"]


def load_model(tmp_path):
    spec = importlib.util.spec_from_file_location("normalised", tmp_path / "models" / "normalised.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Model


def test_a_model_only_scripts_build_is_silent_and_runs(tmp_path):
    root = repository(tmp_path, train=SCRIPT)
    assert adl001_lines(root / "models" / "normalised.py") == []
    model = load_model(tmp_path)()
    batch = torch.randn(5, 4)
    model(batch).sum().backward()  # a data batch: torch.var kept nothing a write breaks
    assert model.fc.weight.grad is not None


@pytest.mark.parametrize("other", [AS_PART, SUBCLASS], ids=["attribute", "subclass-in-sequential"])
def test_a_model_built_as_a_part_is_reported_and_fails(tmp_path, other):
    root = repository(tmp_path, train=SCRIPT, stack=other)
    assert adl001_lines(root / "models" / "normalised.py") == [13]
    model = nn.Sequential(nn.Linear(4, 4), load_model(tmp_path)())
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        model(torch.randn(5, 4)).sum().backward()


def test_a_trainer_that_is_no_module_is_no_evidence(tmp_path):
    trainer = textwrap.dedent("""\
        from models.normalised import Model


        class Experiment:
            def __init__(self):
                self.model = Model()
        """)
    root = repository(tmp_path, exp=trainer)
    assert adl001_lines(root / "models" / "normalised.py") == []


HELD_NEVER_CALLED = textwrap.dedent("""\
    import torch.nn as nn
    from models.normalised import Model


    class ActorCritic(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Linear(4, 4)
            self.returns_normalizer = Model()

        def forward(self, x):
            return self.encoder(x)
    """)

PER_KEY = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from models.normalised import Model


    class PerKey(nn.Module):
        def __init__(self, keys):
            super().__init__()
            self.per_key = nn.ModuleDict({k: Model() for k in keys})

        def forward(self, x):
            out = {}
            for k, module in self.per_key.items():
                out[k] = module(x[k])
            return out


    class Normaliser(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Linear(2, 2)
            self.inputs = PerKey(["obs"])

        def forward(self, obs):
            with torch.no_grad():
                clean = self.inputs(obs)
            return self.encoder(clean["obs"])
    """)

PER_KEY_FED = PER_KEY.replace(
    "        with torch.no_grad():\n            clean = self.inputs(obs)\n",
    "        clean = self.inputs({\"obs\": self.embed(obs[\"obs\"])})\n").replace(
    "        self.encoder = nn.Linear(2, 2)\n",
    "        self.encoder = nn.Linear(2, 2)\n        self.embed = nn.Linear(4, 4)\n")
assert PER_KEY_FED.count("self.embed") == 2


def load_script(tmp_path, monkeypatch, name):
    monkeypatch.syspath_prepend(str(tmp_path))
    for module in ("models", "models.normalised", name):
        monkeypatch.delitem(sys.modules, module, raising=False)
    return importlib.import_module(name)


def test_a_part_its_builder_never_calls_is_no_evidence(tmp_path, monkeypatch):
    """sample-factory's ActorCritic keeps `self.returns_normalizer`, which only the
    learner calls, on data: holding a part is no evidence that it is fed a graph."""
    root = repository(tmp_path, train=SCRIPT, agent=HELD_NEVER_CALLED)
    assert adl001_lines(root / "models" / "normalised.py") == []
    agent = load_script(tmp_path, monkeypatch, "agent").ActorCritic()
    normalised = agent.returns_normalizer(torch.randn(5, 4))  # data, as its callers pass
    normalised.sum().backward()
    assert agent.returns_normalizer.fc.weight.grad is not None


def test_a_part_handed_its_builders_arguments_needs_a_fed_builder(tmp_path, monkeypatch):
    """sample-factory's RunningMeanStdDictInPlace hands its own argument to the parts in
    its ModuleDict, and its builder calls it under no_grad: no graph reaches the parts.
    Called with a layer's output instead, the same parts fail in backward, and are reported."""
    silent, fed = tmp_path / "silent", tmp_path / "fed"
    silent.mkdir()
    fed.mkdir()
    root = repository(silent, train=SCRIPT, wrappers=PER_KEY)
    assert adl001_lines(root / "models" / "normalised.py") == []
    model = load_script(silent, monkeypatch, "wrappers").Normaliser()
    model({"obs": torch.randn(5, 4)}).sum().backward()
    assert model.encoder.weight.grad is not None

    root = repository(fed, train=SCRIPT, wrappers=PER_KEY_FED)
    assert adl001_lines(root / "models" / "normalised.py") == [13]
    model = load_script(fed, monkeypatch, "wrappers").Normaliser()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        model({"obs": torch.randn(5, 4)}).sum().backward()
