"""What the linter knows about torch names: which calls make tensors, which
methods write in place, which ops keep what for backward (from saves.json)."""

from __future__ import annotations

import ast
import json
from functools import lru_cache
from pathlib import Path

SAVES_PATH = Path(__file__).parent / "data" / "saves.json"


@lru_cache(maxsize=1)
def saves_table() -> dict[str, dict]:
    """``{"torch.sigmoid": {"grad_fn": ..., "output": bool, "inputs": [...]}, ...}``."""
    with open(SAVES_PATH, encoding="utf-8") as f:
        return json.load(f)["ops"]


@lru_cache(maxsize=1)
def tensor_methods() -> frozenset[str]:
    """Public ``torch.Tensor`` methods of the torch the table was generated from."""
    with open(SAVES_PATH, encoding="utf-8") as f:
        return frozenset(json.load(f)["tensor_methods"])


# torch.X calls that do not return a tensor (or return a context manager).
NOT_TENSOR_FUNCTIONS = frozenset("""
no_grad enable_grad set_grad_enabled inference_mode is_grad_enabled
is_inference_mode_enabled is_tensor is_storage is_floating_point is_complex
is_nonzero is_same_size numel device dtype Size Generator manual_seed seed
initial_seed set_default_dtype get_default_dtype set_default_device
set_default_tensor_type set_printoptions set_num_threads get_num_threads
set_num_interop_threads get_num_interop_threads use_deterministic_algorithms
are_deterministic_algorithms_enabled compile save load typename finfo iinfo
get_rng_state set_rng_state set_float32_matmul_precision
get_float32_matmul_precision broadcast_shapes is_autocast_enabled
autocast jit cuda backends distributed unbind split chunk tensor_split
hsplit vsplit dsplit meshgrid sort topk max min kthvalue mode median
unique unique_consecutive std_mean var_mean aminmax frexp histogram
slogdet lstsq qr svd eig geqrf triangular_solve lu_unpack where
nonzero_static result_type can_cast promote_types
""".split())
TENSOR_SUBMODULES = ("torch.nn.functional.", "torch.linalg.", "torch.fft.", "torch.special.")
NOT_TENSOR_SUBMODULE_FUNCTIONS = frozenset({
    "torch.linalg.svd", "torch.linalg.qr", "torch.linalg.eig", "torch.linalg.eigh",
    "torch.linalg.slogdet", "torch.linalg.lstsq", "torch.linalg.lu", "torch.linalg.lu_factor",
    "torch.nn.functional.max_pool1d_with_indices", "torch.nn.functional.max_pool2d_with_indices",
    "torch.nn.functional.max_pool3d_with_indices", "torch.nn.functional.multi_head_attention_forward",
})
# Tensor methods whose result is not a tensor.
NOT_TENSOR_METHODS = frozenset("""
item tolist size dim ndimension numel nelement stride data_ptr element_size
storage untyped_storage storage_offset numpy is_contiguous is_floating_point
is_complex is_leaf is_shared is_pinned is_set_to get_device type backward
register_hook register_post_accumulate_grad_hook retain_grad unbind split chunk
tensor_split max min sort topk kthvalue mode median unique aminmax any all
equal allclose __len__ __iter__ tobytes __bool__ __float__ __int__ cpu_count
""".split())
# Ops with overloads that return different things and save different tensors,
# told apart at a call by the second argument (saves.json has one key per
# overload): `torch.min(a, b)` ("other", a tensor), `torch.min(a, dim)` ("dim",
# a (values, indices) pair), `torch.min(a)` (a tensor).
OVERLOADED_OPS = frozenset({"min", "max"})
# Methods (and torch functions) in NOT_TENSOR_METHODS whose result still carries
# the receiver's graph: tuples of tensors (`x.chunk(2)`, `x.max(dim)`), and
# overloads that return one tensor.  Their element 1 of a value-selecting
# reduction (`x.max(1)[1]`, `.indices`) is an index tensor, without a graph.
GRAPH_CARRYING_TUPLE_METHODS = frozenset("""
unbind split chunk tensor_split max min sort topk kthvalue mode median aminmax
""".split())
VALUE_SELECTING_METHODS = frozenset("max min sort topk kthvalue mode median".split())
# Calls whose result unpacks into tensors: `q, k, v = x.chunk(3, -1)`.
SPLITTING_METHODS = frozenset({"chunk", "split", "unbind", "tensor_split", "hsplit", "vsplit",
                               "split_with_sizes", "unsafe_chunk", "unsafe_split"})
SPLITTING_FUNCTIONS = frozenset("torch." + m for m in SPLITTING_METHODS)
# Methods that end in "_" but do not write the tensor's values.
NOT_WRITING_METHODS = frozenset({
    "requires_grad_", "share_memory_", "detach_", "rename_", "retain_grad_",
    "record_stream_", "resize_as_sparse_", "is_set_to_", "pin_memory_",
})


def returns_its_receiver(method: str) -> bool:
    """An in-place tensor method (`exp_`, `div_`, `masked_fill_`): it returns the
    tensor it wrote, so its result is the receiver itself."""
    return method.endswith("_") and not method.startswith("_") and method not in NOT_WRITING_METHODS


# Methods whose result has no autograd graph, whatever the receiver.
GRAD_CUTTING_METHODS = frozenset({"detach", "item", "tolist", "numpy", "cpu_numpy"})
# Calls that return (values, indices): the values keep the input's graph, the indices none.
VALUES_INDICES_METHODS = frozenset({"topk", "sort", "max", "min", "kthvalue", "mode", "median",
                                    "cummax", "cummin"})
# Reads of a tensor's metadata: they never see its values (an in-place write
# does not change them).
METADATA_ATTRIBUTES = frozenset({"shape", "dtype", "device", "ndim", "layout", "is_cuda"})
METADATA_METHODS = frozenset({"size", "dim", "ndimension", "numel", "nelement", "get_device",
                              "is_contiguous", "is_floating_point", "element_size"})
# Tensor methods (and torch functions) whose result is bool or integer: never part of a graph.
INTEGER_RESULT_METHODS = frozenset("""
eq ne lt le gt ge greater less greater_equal less_equal not_equal logical_and logical_or
logical_not logical_xor isnan isinf isfinite isposinf isneginf isclose argmax argmin argsort
nonzero long int bool byte short char sign_bit signbit bucketize searchsorted bincount
count_nonzero
""".split())
# nn modules with parameters: their output carries a graph in training code.
PARAMETERISED_MODULES = frozenset("""
Linear Bilinear Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d
Embedding EmbeddingBag LayerNorm GroupNorm BatchNorm1d BatchNorm2d BatchNorm3d
InstanceNorm1d InstanceNorm2d InstanceNorm3d LSTM GRU RNN LSTMCell GRUCell RNNCell
MultiheadAttention PReLU Transformer TransformerEncoder TransformerDecoder
TransformerEncoderLayer TransformerDecoderLayer RMSNorm
""".split())
# nn layers with a `.weight` parameter (when built with weights: `affine=True`, the
# default for the batch norms).
LAYERS_WITH_WEIGHT = frozenset("""
Linear Bilinear Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d
Embedding EmbeddingBag LayerNorm GroupNorm BatchNorm1d BatchNorm2d BatchNorm3d PReLU RMSNorm
""".split())
# Methods and attributes whose result is a view of the receiver.
VIEW_METHODS = frozenset("""
view view_as t transpose permute narrow select unsqueeze squeeze expand
expand_as diagonal unfold as_strided movedim moveaxis swapaxes swapdims
unflatten real imag detach mT mH T H adjoint indices values
""".split())
VIEW_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "real", "imag", "data"})
# Views over the same memory with the axes reordered: copying one into the region it
# views overlaps partially, which PyTorch refuses (`out[1] = out[1].transpose(-2, -1)`).
TRANSPOSING_METHODS = frozenset({"transpose", "t", "permute", "swapaxes", "swapdims", "movedim",
                                 "moveaxis", "adjoint"})
TRANSPOSING_ATTRIBUTES = frozenset({"T", "mT", "H", "mH"})
# Ops of two tensor operands whose saves change when one is a Python number.
BINARY_OPS = frozenset("""
mul div add sub pow matmul mm atan2 maximum minimum hypot dot true_divide bmm remainder fmod
""".split())
# Methods that (almost) only tensors have: the receiver's result is a tensor.
# (numpy arrays, pandas objects and jax arrays have none of these; `x.exp()` is torch.)
TENSOR_ONLY_METHODS = frozenset({"detach", "expand", "expand_as", "requires_grad_",
                                 "contiguous", "unsqueeze", "sigmoid", "softmax",
                                 "log_softmax", "relu", "exp", "tanh", "logsumexp",
                                 "masked_fill", "clamp", "log1p", "rsqrt"})
# Factories: a tensor made by one of these (without requires_grad=...) is a constant.
FACTORIES = frozenset("""
arange zeros ones empty full rand randn randint randperm linspace logspace eye
tensor as_tensor asarray from_numpy frombuffer sparse_coo_tensor sparse_csr_tensor
sparse_csc_tensor sparse_compressed_tensor normal poisson Tensor FloatTensor
LongTensor DoubleTensor HalfTensor BoolTensor IntTensor ByteTensor zeros_like ones_like empty_like full_like rand_like
randn_like randint_like tril_indices triu_indices bernoulli multinomial
""".split())
# Tensor attributes that are tensors.
TENSOR_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "data", "grad", "real", "imag"})
# Functionals that take inplace=... and write their first argument when it is True.
INPLACE_FUNCTIONALS = frozenset("""
relu relu6 elu selu celu leaky_relu rrelu hardtanh silu mish hardswish
hardsigmoid threshold dropout dropout1d dropout2d dropout3d alpha_dropout
feature_alpha_dropout
""".split())
# nn modules whose constructor takes inplace=...
INPLACE_MODULES = frozenset("""
ReLU ReLU6 ELU SELU CELU LeakyReLU RReLU Hardtanh SiLU Mish Hardswish
Hardsigmoid Threshold Dropout Dropout1d Dropout2d Dropout3d AlphaDropout
FeatureAlphaDropout
""".split())
# The functional an in-place activation module calls: its saves-table entry
# `torch.nn.functional.X:inplace` says whether it keeps the tensor it wrote.
INPLACE_ACTIVATION_FUNCTIONALS = {
    "ReLU": "relu", "ReLU6": "relu6", "ELU": "elu", "SELU": "selu", "CELU": "celu",
    "LeakyReLU": "leaky_relu", "RReLU": "rrelu", "Hardtanh": "hardtanh", "SiLU": "silu",
    "Mish": "mish", "Hardswish": "hardswish", "Hardsigmoid": "hardsigmoid", "Threshold": "threshold",
}
# nn modules whose forward is one op of the saves table: `self.fc(x)` with
# `self.fc = nn.Linear(...)` saves x, `self.act(x)` with nn.Sigmoid its output.
MODULE_OPS = {
    "Linear": "torch.nn.functional.linear", "Conv2d": "torch.nn.functional.conv2d",
    "Sigmoid": "torch.sigmoid", "Tanh": "torch.tanh", "ReLU": "torch.relu",
    "Softmax": "torch.nn.functional.softmax", "LogSoftmax": "torch.nn.functional.log_softmax",
    "GELU": "torch.nn.functional.gelu", "SiLU": "torch.nn.functional.silu",
    "ELU": "torch.nn.functional.elu", "LeakyReLU": "torch.nn.functional.leaky_relu",
    "Softplus": "torch.nn.functional.softplus", "Mish": "torch.nn.functional.mish",
    "Hardtanh": "torch.nn.functional.hardtanh", "ReLU6": "torch.nn.functional.relu6",
    "LayerNorm": "torch.nn.functional.layer_norm",
    "Conv1d": "torch.nn.functional.conv1d", "Conv3d": "torch.nn.functional.conv3d",
    "ConvTranspose1d": "torch.nn.functional.conv_transpose1d",
    "ConvTranspose2d": "torch.nn.functional.conv_transpose2d",
    "ConvTranspose3d": "torch.nn.functional.conv_transpose3d",
    "GroupNorm": "torch.nn.functional.group_norm",
    "BatchNorm1d": "torch.nn.functional.batch_norm", "BatchNorm2d": "torch.nn.functional.batch_norm",
    "BatchNorm3d": "torch.nn.functional.batch_norm",
    "Embedding": "torch.nn.functional.embedding", "MaxPool2d": "torch.nn.functional.max_pool2d",
}
# Module methods that return the module or configure it, not a tensor.
MODULE_METHODS = frozenset("""
cuda cpu to train eval half float double bfloat16 apply parameters named_parameters
modules children state_dict load_state_dict zero_grad register_buffer requires_grad_
size dim shape numel
""".split())
# Misspellings of `requires_grad` (ADL016).
REQUIRES_GRAD_TYPOS = frozenset("""
require_grad requires_grads require_grads required_grad requried_grad requires_gard
reqires_grad requieres_grad requires_gradient require_gradient requires_grade
""".split())
# nn.Module subclasses that frameworks provide: a class built on one is a module
# (its layers, its forward), and the framework runs the backward.
FRAMEWORK_MODULE_BASES = frozenset({
    "lightning.LightningModule", "lightning.pytorch.LightningModule",
    "lightning.pytorch.core.LightningModule", "lightning.pytorch.core.module.LightningModule",
    "pytorch_lightning.LightningModule", "pytorch_lightning.core.LightningModule",
    "pytorch_lightning.core.module.LightningModule",
    "transformers.PreTrainedModel", "transformers.modeling_utils.PreTrainedModel",
})
# Methods whose returned loss a framework backpropagates: Lightning's
# `training_step` (automatic optimization), the Hugging Face Trainer's `compute_loss`.
FRAMEWORK_LOSS_METHODS = {
    "training_step": ("lightning.", "pytorch_lightning."),
    "compute_loss": ("transformers.", "trl."),
}
# Calls that run backward on their first argument: Accelerate's
# `accelerator.backward(loss)`, Lightning Fabric's `fabric.backward(loss)` and
# `self.manual_backward(loss)` in a LightningModule.
FRAMEWORK_BACKWARD_RECEIVERS = ("accelerator", "fabric")
# Methods of a torch.distributions.Distribution whose result callers
# differentiate (reparameterised samples, log-densities): library code that
# returns a differentiable value to unknown callers.
DISTRIBUTION_BASES = ("torch.distributions.", "pyro.distributions.")
# A torch.distributions Transform's `_call(x)` / `_inverse(y)` /
# `log_abs_det_jacobian(x, y)` likewise: a TransformedDistribution's rsample()
# and log_prob() differentiate through them.
DIFFERENTIABLE_DISTRIBUTION_METHODS = frozenset({
    "log_prob", "rsample", "entropy", "cdf", "icdf", "log_cdf", "log_survival_function",
    "_call", "_inverse", "log_abs_det_jacobian",
})
# Their argument that is a tensor by the Distribution API: `log_prob(value)`, `_call(x)`.
DISTRIBUTION_VALUE_METHODS = frozenset({"log_prob", "cdf", "icdf", "log_cdf",
                                        "log_survival_function", "_call", "_inverse",
                                        "log_abs_det_jacobian"})
AUTOGRAD_FUNCTIONS = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})
OPTIMIZER_CLASSES = frozenset("""
SGD Adam AdamW Adamax Adagrad Adadelta RMSprop Rprop NAdam RAdam ASGD LBFGS SparseAdam
""".split())
# Other frameworks with their own autodiff, whose `loss.backward()`, `opt.step()` and
# `x.requires_grad` look like torch's but follow their own rules (NVIDIA Warp's
# `tape.backward(loss)`, cleared by `tape.zero()`; Chainer's `model.cleargrads()`).
OTHER_AUTODIFF_PACKAGES = frozenset("""
warp warp_nn jax flax tensorflow paddle mindspore mxnet oneflow tinygrad mlx chainer
""".split())
# The last part of the names of the context managers and decorators under which torch records
# no graph (a tuple, so that str.endswith can take it too; GRAD_OFF_CONTEXTS holds the
# qualified names).
GRAD_OFF_NAMES = ("no_grad", "inference_mode")

GRAD_OFF_CONTEXTS = frozenset({
    "torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad",
    "torch.autograd.grad_mode.no_grad", "torch.autograd.inference_mode",
})
GRAD_SWITCHES = ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled")


def last_name(node) -> str:
    """The last part of a name or attribute (`nn.ReLU` -> "ReLU", `relu` -> "relu"); "" for
    anything else (a call's result, a subscript)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def self_attribute(node) -> str | None:
    """The attribute's name of `self.<name>` ("sum" for `self.sum`), else None."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def qualified_name(node, aliases: dict) -> str | None:
    """``torch.nn.functional.relu`` for ``F.relu`` after ``import torch.nn.functional as F``
    (``aliases`` maps the file's imported names to what they stand for)."""
    if node.__class__ is ast.Name:  # (the most frequent question, answered without the loop)
        return aliases.get(node.id)
    attributes = []
    while node.__class__ is ast.Attribute:  # a loop, not recursion: the linter asks this on most calls
        attributes.append(node.attr)
        node = node.value
    if node.__class__ is not ast.Name:
        return None
    base = aliases.get(node.id)
    if not attributes or not base:
        return base if not attributes else None
    attributes.append(base)
    return ".".join(reversed(attributes))


def keyed_module(node, text) -> str | None:
    """``self.models["decoder"]`` (in double quotes, however it is written): a module
    kept in a dict under a constant key (monodepth2's ``self.models = {"encoder": ...,
    ...}``, an ``nn.ModuleDict``), spelled one way so that the optimizer's modules and
    the called modules compare equal (``text``: the checker's source text)."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
            and isinstance(node.slice.value, str) and node.slice.value.isidentifier() \
            and isinstance(node.value, (ast.Name, ast.Attribute)):
        return f'{text(node.value)}["{node.slice.value}"]'
    return None


# an element of a container indexed by the loop's variable, in the patterns of
# ``Training.optimizers``: `optimizerDs[*]` built over `discriminators[*]` (ADL003)
ELEMENT = "[*]"


def indexed_element(node, text) -> tuple | None:
    """``optimizers[i]``, ``self.critics[k]``: an element of a list or dict indexed by a
    name (a loop's variable), as (the container's text, the index's name); None for any
    other subscript (a constant key is ``keyed_module``'s)."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Name) \
            and isinstance(node.value, (ast.Name, ast.Attribute)):
        return text(node.value), node.slice.id
    return None


def turns_grad_off(qualname: str | None, context) -> bool:
    """Whether ``with <context>:`` runs its block without gradients: ``torch.no_grad()``,
    ``torch.inference_mode()`` (not ``inference_mode(False)``), ``set_grad_enabled(False)``."""
    first_false = isinstance(context, ast.Call) and bool(context.args) and \
        isinstance(context.args[0], ast.Constant) and context.args[0].value is False
    if qualname in GRAD_OFF_CONTEXTS:
        return not first_false
    return qualname in GRAD_SWITCHES and first_false


INIT_FUNCTION_NAMES = frozenset({
    "__init__", "reset_parameters", "_reset_parameters", "_init_weights",
    "init_weights", "initialize_weights", "_initialize_weights", "weights_init",
    "weight_init", "_weight_init", "__setstate__", "_load_from_state_dict",
    "load_state_dict",
})
INIT_FUNCTION_PREFIXES = ("init_", "_init_", "reset_", "_reset_", "initialize")
# Out-of-place spelling of in-place methods, for the unsafe rewrite
# ``x.add_(y)`` -> ``x = x.add(y)``.
OUT_OF_PLACE = frozenset("""
add sub mul div pow clamp clamp_min clamp_max relu sigmoid tanh exp log neg
abs sqrt rsqrt masked_fill index_fill index_add index_copy index_put scatter
scatter_add scatter_reduce addcmul addcdiv lerp sin cos floor ceil round sign
reciprocal exp2 expm1 log1p log2 log10 square true_divide addmm baddbmm
fill_diagonal hardtanh leaky_relu
""".split())


def is_init_function(name: str) -> bool:
    return name in INIT_FUNCTION_NAMES or name.startswith(INIT_FUNCTION_PREFIXES)


def is_tensor_function(qualname: str) -> bool:
    """True for ``torch.X`` / ``torch.nn.functional.X`` calls that return one tensor."""
    if qualname.startswith(TENSOR_SUBMODULES):
        return qualname not in NOT_TENSOR_SUBMODULE_FUNCTIONS
    if qualname in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
        return True
    if not qualname.startswith("torch.") or qualname.count(".") != 1:
        return False
    name = qualname[6:]
    return bool(name) and name[0].islower() and name not in NOT_TENSOR_FUNCTIONS


class AttributeAlias(str):
    """An optimizer's module known only as the attribute a constructor argument was
    stored in (`self.critic = critic`, `Adam(critic.parameters())`): it counts for
    calls of that attribute or a part of it, not for calls of the object that holds
    it (`self(...)` may never use it; statements.attribute_aliases)."""
