"""Set AU (docs/lint.md, "A forty-ninth held-out check: set AU"): the false causes of
its first run fixed here, each with the false shape (silent), a second false shape
written before the change ran on it, a real shape of the same rule still found, and
a torch check.  None of the shapes is a copy of the set's code:

- ADL018 in wiseodd/last_layer_laplace (https://github.com/wiseodd/last_layer_laplace,
  `paper/notebooks/laplace/kfla.py`): `opt = KFAC(self.net)`, a class of another
  project file deriving from torch's `Optimizer`, stepped after each backward with
  no clear; its `step()` only averages the layer inputs and output gradients that
  its hooks saved and never reads `.grad`, so nothing reads what piles up there.
- ADL017 in y0ast/deterministic-uncertainty-quantification
  (https://github.com/y0ast/deterministic-uncertainty-quantification,
  `utils/cnn_duq.py`, `utils/resnet_duq.py`): a module method (`update_embeddings`)
  re-binds a buffer from the features of the module's own layers, and both training
  scripts call it only under `with torch.no_grad():`, so the buffer gets no graph.
"""

from __future__ import annotations

import os

import pytest
import torch
from torch import nn

from autograd_doctor.lint.engine import Selection, lint_source


def _found(source, filename="<string>", select=("ALL",)):
    return [(f.code, f.line) for f in lint_source(source, filename=filename, selection=Selection(select=select))
            if f.code != "ADL000"]


def _line(source, text):
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _load(source, name, **names):
    namespace = {"__name__": name, **names}
    exec(compile(source, f"<{name}>", "exec"), namespace)
    return namespace


def _project(tmp_path, files: dict, main_name: str, main: str):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    for relative, text in files.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    path = tmp_path / main_name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(main)
    return os.fspath(path)


# --- ADL018: a project optimizer whose step() reads no gradient ---------------------

# The set's form: statistics that hooks saved, averaged by `step()`; `.grad` never read.
HOOK_STATISTICS = '''
import torch
from torch.optim.optimizer import Optimizer


class InputCovariance(Optimizer):
    def __init__(self, net, decay=0.9):
        self.decay = decay
        groups = []
        for layer in net.modules():
            if isinstance(layer, torch.nn.Linear):
                layer.register_forward_pre_hook(self._keep_input)
                groups.append({"params": [layer.weight], "layer": layer})
        super().__init__(groups, {})

    def _keep_input(self, layer, inputs):
        self.state[layer]["x"] = inputs[0].detach()

    def step(self):
        for group in self.param_groups:
            state = self.state[group["layer"]]
            x = state["x"]
            cov = x.t() @ x / x.shape[0]
            state["cov"] = cov if "cov" not in state else self.decay * state["cov"] + (1 - self.decay) * cov
'''

# A second false form, written before the change ran on it: a parameter-averaging
# collector (as stochastic weight averaging keeps) under a project base class that
# derives from `optim.Optimizer` of `from torch import optim`; a helper function of
# the base's file copies the parameters.
AVERAGING_BASE = '''
import torch
from torch import optim


def _copy_of(p):
    return p.detach().clone()


class Collector(optim.Optimizer):
    def __init__(self, params):
        super().__init__(params, {})

    def collected(self, p):
        return self.state[p].get("mean")
'''

AVERAGING = '''
from stats.base import Collector, _copy_of


class RunningMean(Collector):
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                n = state.get("n", 0)
                mean = state.get("mean", _copy_of(p) * 0)
                state["mean"] = (mean * n + _copy_of(p)) / (n + 1)
                state["n"] = n + 1
'''

# The real forms: a hand-written update that reads `.grad`, and a wrapper that steps
# an inner torch optimizer.
HAND_SGD = '''
import torch
from torch.optim.optimizer import Optimizer


class PlainSGD(Optimizer):
    def __init__(self, params, lr=0.1):
        super().__init__(params, {"lr": lr})

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.add_(p.grad, alpha=-group["lr"])
'''

WRAPPER = '''
import torch
from torch.optim.optimizer import Optimizer


class Wrapped(Optimizer):
    def __init__(self, params, lr=0.1):
        super().__init__(params, {"lr": lr})
        self.inner = torch.optim.SGD(self.param_groups, lr=lr)

    def step(self):
        self.inner.step()
'''


def _estimate(import_line: str, build: str) -> str:
    return f'''
import torch
from torch import nn
{import_line}


def estimate(net, batches):
    criterion = nn.CrossEntropyLoss()
    opt = {build}
    for x, y in batches:
        loss = criterion(net(x), y)
        loss.backward()
        opt.step()
    return opt
'''


ESTIMATE_HOOKS = _estimate("from tools.curvature import InputCovariance", "InputCovariance(net)")
ESTIMATE_MEAN = _estimate("from stats.mean import RunningMean", "RunningMean(net.parameters())")
ESTIMATE_SGD = _estimate("from tools.plain import PlainSGD", "PlainSGD(net.parameters())")
ESTIMATE_WRAPPED = _estimate("from tools.plain import Wrapped", "Wrapped(net.parameters())")


@pytest.mark.parametrize("files, main", [
    ({"tools/__init__.py": "", "tools/curvature.py": HOOK_STATISTICS}, ESTIMATE_HOOKS),
    ({"stats/__init__.py": "", "stats/base.py": AVERAGING_BASE, "stats/mean.py": AVERAGING}, ESTIMATE_MEAN),
], ids=["hook-statistics", "averaging-collector"])
def test_a_project_optimizer_that_reads_no_gradient_is_silent(tmp_path, files, main):
    path = _project(tmp_path, files, "laplace/estimate.py", main)
    assert _found(main, filename=path, select=("ADL018",)) == []


@pytest.mark.parametrize("main", [ESTIMATE_SGD, ESTIMATE_WRAPPED], ids=["reads-grad", "steps-inner"])
def test_a_project_optimizer_that_reads_gradients_is_still_reported(tmp_path, main):
    files = {"tools/__init__.py": "", "tools/plain.py": HAND_SGD + WRAPPER.split("\n", 3)[3]}
    path = _project(tmp_path, files, "laplace/estimate.py", main)
    assert _found(main, filename=path, select=("ADL018",)) == [("ADL018", _line(main, "opt.step()"))]


def test_a_project_optimizer_with_another_outside_base_is_still_reported(tmp_path):
    outside = HOOK_STATISTICS.replace("from torch.optim.optimizer import Optimizer",
                                      "from torch.optim import SGD as Optimizer")
    files = {"tools/__init__.py": "", "tools/curvature.py": outside}
    path = _project(tmp_path, files, "laplace/estimate.py", ESTIMATE_HOOKS)
    assert _found(ESTIMATE_HOOKS, filename=path, select=("ADL018",)) == \
        [("ADL018", _line(ESTIMATE_HOOKS, "opt.step()"))]


def _batches():
    torch.manual_seed(0)
    return [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(4)]


def test_torch_agrees_what_piles_up_reaches_only_the_optimizer_that_reads_it():
    hooks = _load(HOOK_STATISTICS, "curvature")
    plain = _load(HAND_SGD, "plain")
    run = {}
    for name, cls, clear in [("hooks", hooks["InputCovariance"], False), ("hooks-cleared", hooks["InputCovariance"], True),
                             ("sgd", plain["PlainSGD"], False), ("sgd-cleared", plain["PlainSGD"], True)]:
        torch.manual_seed(1)
        net = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 3))
        opt = cls(net) if name.startswith("hooks") else cls(net.parameters())
        for x, y in _batches():
            if clear:
                opt.zero_grad()
            nn.CrossEntropyLoss()(net(x), y).backward()
            opt.step()
        run[name] = (net, opt)
    # the statistics optimizer: the same statistics and parameters with or without clearing
    for (a, b) in [(run["hooks"][1], run["hooks-cleared"][1])]:
        for ga, gb in zip(a.param_groups, b.param_groups):
            assert torch.equal(a.state[ga["layer"]]["cov"], b.state[gb["layer"]]["cov"])
    assert all(torch.equal(p, q) for p, q in zip(run["hooks"][0].parameters(), run["hooks-cleared"][0].parameters()))
    # the hand-written SGD: the piled-up gradients move the parameters elsewhere
    assert not all(torch.allclose(p, q) for p, q in zip(run["sgd"][0].parameters(), run["sgd-cleared"][0].parameters()))


# --- ADL017: a buffer re-bound in a method that every call runs without gradients ----

# The set's form: a class-centroid buffer re-bound from the module's own features.
CENTROIDS = '''
import torch
from torch import nn


class Centroids(nn.Module):
    def __init__(self, classes=3, dim=4):
        super().__init__()
        self.body = nn.Linear(dim, dim)
        self.register_buffer("means", torch.zeros(classes, dim))

    def refresh(self, x, onehot):
        z = self.body(x)
        self.means = 0.9 * self.means + 0.1 * (onehot.t() @ z)

    def forward(self, x):
        z = self.body(x)
        return -((z.unsqueeze(1) - self.means.unsqueeze(0)) ** 2).sum(-1)
'''

# A second false form, written before the change ran on it: the in-place update of
# the buffer (`mul_(...).add_(...)`), called from a function decorated `@torch.no_grad()`
# in the training script, which is itself the only caller.
CENTROIDS_IN_PLACE = CENTROIDS.replace(
    "self.means = 0.9 * self.means + 0.1 * (onehot.t() @ z)",
    "self.means.mul_(0.9).add_(0.1 * (onehot.t() @ z))")

TRAIN_WITH_BLOCK = '''
import torch
from torch import nn
from model.centroids import Centroids


def train(batches):
    model = Centroids()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in batches:
        opt.zero_grad()
        onehot = nn.functional.one_hot(y, 3).float()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        with torch.no_grad():
            model.refresh(x, onehot)
    return model
'''

TRAIN_WITH_DECORATOR = '''
import torch
from torch import nn
from model.centroids import Centroids


@torch.no_grad()
def refresh_all(model, x, y):
    model.refresh(x, nn.functional.one_hot(y, 3).float())


def train(batches):
    model = Centroids()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in batches:
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        refresh_all(model, x, y)
    return model
'''

# The real form: one caller runs it with gradients on.
TRAIN_WITH_GRADIENTS = TRAIN_WITH_BLOCK.replace(
    "        with torch.no_grad():\n            model.refresh(x, onehot)",
    "        model.refresh(x, onehot)")


@pytest.mark.parametrize("module, train", [(CENTROIDS, TRAIN_WITH_BLOCK), (CENTROIDS_IN_PLACE, TRAIN_WITH_DECORATOR)],
                         ids=["assignment-under-block", "in-place-under-decorator"])
def test_a_buffer_updated_only_without_gradients_is_silent(tmp_path, module, train):
    path = _project(tmp_path, {"model/__init__.py": "", "train.py": train}, "model/centroids.py", module)
    assert _found(module, filename=path, select=("ADL017",)) == []


@pytest.mark.parametrize("module, text", [(CENTROIDS, "self.means = 0.9"), (CENTROIDS_IN_PLACE, "self.means.mul_")],
                         ids=["assignment", "in-place"])
def test_a_buffer_updated_by_a_caller_with_gradients_is_still_reported(tmp_path, module, text):
    path = _project(tmp_path, {"model/__init__.py": "", "train.py": TRAIN_WITH_GRADIENTS},
                    "model/centroids.py", module)
    assert _found(module, filename=path, select=("ADL017",)) == [("ADL017", _line(module, text))]


def test_a_method_that_turns_gradients_on_itself_is_still_reported(tmp_path):
    module = CENTROIDS.replace("        z = self.body(x)\n        self.means",
                               "        with torch.enable_grad():\n            z = self.body(x)\n        self.means", 1)
    path = _project(tmp_path, {"model/__init__.py": "", "train.py": TRAIN_WITH_BLOCK}, "model/centroids.py", module)
    assert _found(module, filename=path, select=("ADL017",)) == [("ADL017", _line(module, "self.means = 0.9"))]


def test_torch_agrees_the_buffer_keeps_a_graph_only_when_refreshed_with_gradients():
    batches = _batches()
    for source, train, fails in [(CENTROIDS, TRAIN_WITH_BLOCK, False), (CENTROIDS_IN_PLACE, TRAIN_WITH_DECORATOR, False),
                                 (CENTROIDS, TRAIN_WITH_GRADIENTS, True)]:
        module = _load(source, "centroids")
        script = _load(train.replace("from model.centroids import Centroids\n", ""), "train",
                       Centroids=module["Centroids"])
        if fails:
            with pytest.raises(RuntimeError, match="backward through the graph a second time"):
                script["train"](batches)
        else:
            model = script["train"](batches)
            assert model.means.grad_fn is None


# --- ADL003: a method of the module that builds its result from its arguments alone ----

# The set's form (synthcity's VAE): `loader = self._loader(X, y)`, a method returning
# a data loader over the arguments, then batches read as `data[0]` in the epoch loop.
LOADER_MODULE = '''
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Regressor(nn.Module):
    def __init__(self, dim=4, batch_size=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 8), nn.Tanh(), nn.Linear(8, 1))
        self.batch_size = batch_size

    def forward(self, x):
        return self.net(x)

    def _loader(self, X, y):
        dataset = TensorDataset(X, y)
        return DataLoader(dataset, batch_size=self.batch_size)

    def fit(self, X, y, epochs=3):
        loader = self._loader(X, y)
        optimizer = torch.optim.Adam(self.parameters(), lr=1e-2)
        for _ in range(epochs):
            for i, data in enumerate(loader):
                xb = data[0]
                yb = data[1]
                loss = nn.functional.mse_loss(self(xb), yb)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        return self
'''

# A second false form, written before the change ran on it: a cast helper and a
# split helper of the module (rows picked by indices another attribute gives), and a
# loader built in the training method from what they return, under an import alias.
SPLIT_MODULE = '''
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader as TorchLoader, TensorDataset


class Forecaster(nn.Module):
    def __init__(self, dim=4, device="cpu"):
        super().__init__()
        self.body = nn.Linear(dim, 1)
        self.device = device
        self.order = None

    def forward(self, x):
        return self.body(x)

    def _as_tensor(self, X):
        if isinstance(X, torch.Tensor):
            return X.to(self.device).float()
        return torch.as_tensor(np.asarray(X)).to(self.device).float()

    def _split(self, X, y):
        idx = self.order if self.order is not None else np.random.permutation(len(X))
        cut = int(0.8 * len(idx))
        X_train, X_val = X[idx[:cut]], X[idx[cut:]]
        return X_train, X_val, y[idx[:cut]], y[idx[cut:]]

    def fit(self, X, y, batch=8, epochs=2):
        X_train, X_val, y_train, y_val = self._split(self._as_tensor(X), self._as_tensor(y))
        loader = TorchLoader(TensorDataset(X_train, y_train), batch_size=batch)
        optimizer = torch.optim.SGD(self.parameters(), lr=1e-2)
        for _ in range(epochs):
            for batch_data in loader:
                xb = batch_data[0]
                loss = nn.functional.mse_loss(self(xb), batch_data[1])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        return nn.functional.mse_loss(self(X_val), y_val).item()
'''

# The real form: the loader's data set holds features a layer of the module computed
# once, before the steps; every batch's backward reaches that layer's old graph.
ENCODED_LOADER_MODULE = LOADER_MODULE.replace(
    "dataset = TensorDataset(X, y)", "dataset = TensorDataset(torch.tanh(self.net[0](X)), y)").replace(
    "self(xb)", "self.net[2](self.net[1](xb))")


@pytest.mark.parametrize("source", [LOADER_MODULE, SPLIT_MODULE], ids=["loader-method", "cast-and-split"])
def test_data_from_a_method_over_its_arguments_is_silent(source):
    assert _found(source, select=("ADL003",)) == []


def test_a_loader_over_a_layers_output_is_still_reported():
    assert _found(ENCODED_LOADER_MODULE, select=("ADL003",)) == \
        [("ADL003", _line(ENCODED_LOADER_MODULE, "optimizer.step()"))]


def test_a_method_writing_an_argument_in_place_does_not_count():
    source = LOADER_MODULE.replace("        dataset = TensorDataset(X, y)",
                                   "        X.mul_(self.net[0].weight.mean())\n        dataset = TensorDataset(X, y)")
    assert _found(source, select=("ADL003",)) == [("ADL003", _line(source, "optimizer.step()"))]


def test_torch_agrees_only_the_encoded_loader_fails():
    torch.manual_seed(0)
    X, y = torch.randn(32, 4), torch.randn(32, 1)
    _load(LOADER_MODULE, "loaders")["Regressor"]().fit(X, y)
    _load(SPLIT_MODULE, "split")["Forecaster"]().fit(X, y)
    with pytest.raises(RuntimeError):
        _load(ENCODED_LOADER_MODULE, "encoded")["Regressor"]().fit(X, y)


# --- ADL023 (recall): a tensor summed for the epoch whose reduction is the loss -------

# The set's form is re-creation r755 (Transolver's per-variable loss total).  A second
# form, written before the change ran on it: `torch.mean(...)` of the per-class losses
# backpropagated, the vector added into a running total with `total = total + v`.
PER_CLASS = '''
import torch
from torch import nn


def train(model, batches, optimizer):
    running = 0
    for x, y in batches:
        class_losses = nn.functional.cross_entropy(model(x), y, reduction="none")
        loss = torch.mean(class_losses)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running = running + class_losses
    return running
'''

# The near-twin: the vector is detached before it is summed.
PER_CLASS_DETACHED = PER_CLASS.replace("running = running + class_losses",
                                       "running = running + class_losses.detach()")


def test_a_vector_the_loss_reduces_summed_with_its_graph_is_found():
    assert _found(PER_CLASS, select=("ADL023",)) == [("ADL023", _line(PER_CLASS, "running = running + class_losses"))]
    message = next(f.message for f in lint_source(PER_CLASS, selection=Selection(select=("ADL023",))))
    assert "class_losses.detach()" in message and "item()" not in message


def test_the_detached_vector_is_silent():
    assert _found(PER_CLASS_DETACHED, select=("ADL023",)) == []


def test_torch_agrees_the_vector_total_keeps_a_graph():
    torch.manual_seed(0)
    batches = [(torch.randn(6, 4), torch.randint(0, 3, (6,))) for _ in range(3)]
    for source, keeps in [(PER_CLASS, True), (PER_CLASS_DETACHED, False)]:
        model = nn.Linear(4, 3)
        total = _load(source, "per_class")["train"](model, batches, torch.optim.SGD(model.parameters(), lr=0.1))
        assert (total.grad_fn is not None) == keeps
