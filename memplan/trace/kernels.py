"""Device kernel rules: memory a real kernel uses that a fake (meta) kernel does not show.

A fake-tensor trace sees each op's inputs and outputs. Some real kernels also allocate scratch memory
through the same caching allocator while they run (oneDNN reorders on the CPU, contiguous copies of
inputs a BLAS library cannot read). When such scratch is live at the peak it counts, so each rule
replays it as transient allocations around the op's outputs.

A rule is a small registered function `rule(args, kwargs, out) -> plan`, where `plan` is a list of
steps: a positive int allocates scratch of that many bytes, `FREE(k)` frees the k-th scratch allocation
of this op (0-based), and `OUTPUTS` is the moment the op's outputs are allocated. Rules register per
device family with `@register(op, families, source=...)`, which refuses duplicates. Which rules apply
also depends on the host CPU for the `cpu` family (oneDNN use differs with the ISA).

CPU convolutions are measured: the first time a convolution layout is seen, it runs once for real on
zero-filled tensors under the CPU allocator's profiler (`measure_cpu_scratch`, inputs up to 256 MiB), and
its exact allocation sequence (reorders, oneDNN scratchpads) is replayed. Larger ones fall back to the
hand-written reorder model below.

Known limitations: the hand-written convolution model ignores oneDNN scratchpads (a few hundred KiB,
ISA dependent) and assumes channel-blocked layouts pad nothing.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Callable

import torch
from torch._subclasses.fake_tensor import FakeTensor
from torch.utils._pytree import tree_flatten, tree_unflatten

from memplan import compat
from memplan.measure.profiler import memory_profile

aten = torch.ops.aten

OUTPUTS = "outputs"


@dataclass(frozen=True)
class FREE:
    index: int


@dataclass(frozen=True)
class KernelRule:
    op: object
    families: tuple[str, ...]
    source: str
    fn: Callable
    onednn: bool = True   # a CPU rule that only holds where aten's CPU kernels use oneDNN


_RULES: dict[tuple[str, object], KernelRule] = {}


def register(op, families: tuple[str, ...], source: str, onednn: bool = True):
    def deco(fn):
        for fam in families:
            key = (fam, op)
            if key in _RULES:
                raise ValueError(f"a kernel rule for {op} on {fam} is already registered")
            _RULES[key] = KernelRule(op, families, source, fn, onednn)
        return fn
    return deco


def rules_for(family: str) -> dict:
    """`{op overload: rule function}` for a device family, as the recorder looks them up per op."""
    skip_onednn = family == "cpu" and not _cpu_uses_onednn()
    return {op: r.fn for (fam, op), r in _RULES.items() if fam == family and not (skip_onednn and r.onednn)}


def all_rules() -> list[KernelRule]:
    return list({id(r): r for r in _RULES.values()}.values())


def _nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


# ---- CPU (oneDNN) ----------------------------------------------------------------------------------

def _cpu_uses_onednn() -> bool:
    return torch.backends.mkldnn.is_available() and torch.backends.mkldnn.enabled


def _cpu_has_onednn_bf16() -> bool:
    """aten/src/ATen/native/mkldnn/Utils.h `mkldnn_bf16_device_check`: AVX512 BW/VL/DQ on x86 (or ARM
    bf16). torch reports the ISA it dispatches to; AVX512 implies those extensions on the CPUs it picks."""
    return torch.backends.cpu.get_cpu_capability().startswith("AVX512")


_MKLDNN_GEMM_MIN_SIZE = 16 * 16 * 16  # aten/src/ATen/native/LinearAlgebra.cpp `checksize`


def _onednn_optimized_format(t: torch.Tensor) -> bool:
    """aten/src/ATen/native/mkldnn/Matmul.cpp `is_mkldnn_optimized_format`: contiguous, or transposed
    in its last two dimensions."""
    if t.is_contiguous():
        return True
    s, st = t.shape, t.stride()
    if t.dim() == 2:
        return st[0] == 1 and st[1] == s[0]
    if t.dim() == 3:
        return st[0] == s[1] * s[2] and st[1] == 1 and st[2] == s[1]
    return False


def _onednn_matmul_copies(m1: torch.Tensor, m2: torch.Tensor) -> list[int]:
    """Bytes of the contiguous copies `mkldnn_matmul` makes of inputs in a layout it cannot read, for
    bf16/fp16 GEMMs that `use_mkldnn_matmul` routes to oneDNN where the CPU has oneDNN bf16."""
    if m1.dtype not in (torch.bfloat16, torch.float16) or m2.dtype != m1.dtype:
        return []
    if m1.dtype == torch.float16:
        return []  # fp16 oneDNN GEMM needs AVX512-FP16 / AMX-FP16 (not modelled: treated as absent)
    if m1.numel() == 0 or m2.numel() == 0:
        return []
    if m1.dim() == 2:
        size = m1.shape[0] * m1.shape[1] * m2.shape[1]
    else:
        size = m1.shape[0] * m1.shape[1] * m1.shape[2] * m2.shape[2]
        if m1.shape[2] * m1.shape[1] * m2.shape[2] < 400:  # bmm's small-problem loop (LinearAlgebra.cpp)
            return []
    if size <= _MKLDNN_GEMM_MIN_SIZE:
        return []
    return [_nbytes(m) for m in (m1, m2) if not _onednn_optimized_format(m)]


def _blas_readable(t: torch.Tensor) -> bool:
    """aten/src/ATen/native/LinearAlgebra.cpp `addmm_impl_cpu_`: BLAS reads a matrix (the last two
    dimensions) that is row- or column-major with a leading dimension of at least its rows / columns;
    any other matrix, an expanded one (stride 0: the gradient of a `sum()`) for one, is first cloned
    contiguous, after the output is allocated."""
    if t.dim() < 2:
        return True
    (r, c), (sr, sc) = t.shape[-2:], t.stride()[-2:]
    return (sc == 1 and sr >= max(1, c)) or (sr == 1 and sc >= max(1, r))


def _gemm_plan(op, args, kwargs, out, m1, m2) -> list:
    """The copies a CPU GEMM makes of its inputs: oneDNN's of layouts it cannot read, BLAS's of matrices
    it cannot read; when there are any, the real kernel is measured once for its exact sequence (copies
    plus oneDNN's scratchpad), as for convolutions."""
    copies = _onednn_matmul_copies(m1, m2)
    clones = [m.numel() * m.element_size() for m in (m1, m2) if not _blas_readable(m)]
    if not copies and not clones:
        return []
    # measured on this host whatever its ISA (oneDNN takes bf16 GEMMs only where it has bf16 support)
    measured = measure_cpu_scratch(op, args, kwargs, out)
    if measured is not None:
        return measured
    if copies and _cpu_has_onednn_bf16():
        return [*copies, OUTPUTS, *[FREE(i) for i in range(len(copies))]]
    return [OUTPUTS, *clones, *[FREE(i) for i in range(len(clones))]]


@register(aten.mm.default, ("cpu",), source="aten/src/ATen/native/mkldnn/Matmul.cpp mkldnn_matmul")
def _cpu_mm(args, kwargs, out):
    return _gemm_plan(aten.mm.default, args, kwargs, out, args[0], args[1])


@register(aten.bmm.default, ("cpu",), source="aten/src/ATen/native/LinearAlgebra.cpp bmm_out_or_baddbmm_")
def _cpu_bmm(args, kwargs, out):
    return _gemm_plan(aten.bmm.default, args, kwargs, out, args[0], args[1])


@register(aten.addmm.default, ("cpu",), source="aten/src/ATen/native/LinearAlgebra.cpp addmm_impl_cpu_")
def _cpu_addmm(args, kwargs, out):
    return _gemm_plan(aten.addmm.default, args, kwargs, out, args[1], args[2])


@register(aten.baddbmm.default, ("cpu",), source="aten/src/ATen/native/LinearAlgebra.cpp bmm_out_or_baddbmm_")
def _cpu_baddbmm(args, kwargs, out):
    return _gemm_plan(aten.baddbmm.default, args, kwargs, out, args[1], args[2])


def _onednn_conv(inp: torch.Tensor, weight: torch.Tensor) -> bool:
    """Whether aten's CPU convolution goes to oneDNN (`use_mkldnn` in Convolution.cpp, simplified to the
    common case: 4-d float/bf16 input, not depthwise-tiny)."""
    return inp.dim() == 4 and inp.dtype in (torch.float32, torch.bfloat16) and weight.dim() == 4


def _blocked_input_copy(inp: torch.Tensor) -> int:
    # oneDNN reorders NCHW input into a channel-blocked layout unless it has too few channels to block
    return _nbytes(inp) if inp.shape[1] % 8 == 0 else 0


@register(aten.convolution.default, ("cpu",), source="aten/src/ATen/native/mkldnn/Conv.cpp _mkldnn_convolution")
def _cpu_conv(args, kwargs, out):
    inp, weight = args[0], args[1]
    measured = measure_cpu_scratch(aten.convolution.default, args, kwargs, out)
    if measured is not None:
        return measured
    if not _onednn_conv(inp, weight) or args[6]:  # transposed convolutions: not modelled
        return []
    # measured with the CPU allocator on torch 2.13 / oneDNN: input reorder, weight reorder, blocked
    # output; the reorders are freed, then the plain output is allocated and the blocked one freed
    in_copy = _blocked_input_copy(inp)
    plan = ([in_copy] if in_copy else []) + [_nbytes(weight), _nbytes(out)]
    n = len(plan)
    return plan + [FREE(i) for i in range(n - 1)] + [OUTPUTS, FREE(n - 1)]


@register(aten.convolution_backward.default, ("cpu",),
          source="aten/src/ATen/native/mkldnn/Conv.cpp mkldnn_convolution_backward")
def _cpu_conv_backward(args, kwargs, out):
    grad_out, inp, weight = args[0], args[1], args[2]
    mask = args[10]
    measured = measure_cpu_scratch(aten.convolution_backward.default, args, kwargs, out)
    if measured is not None:
        return measured
    if not _onednn_conv(inp, weight) or args[7]:  # (..., dilation, transposed, output_padding, groups, mask)
        return []
    # measured with the CPU allocator on torch 2.13 / oneDNN: grad_input first (grad_output and weight
    # reorders, blocked grad_input; then the plain grad_input while the blocked one is still live), then
    # grad_weight (grad_output and input reorders, blocked grad_weight; then the plain grad_weight).
    # The fake kernel allocates both outputs at the end, so a stand-in holds grad_input's bytes meanwhile.
    plan: list = []
    n = 0  # scratch allocations so far

    def alloc(*sizes):
        nonlocal n
        plan.extend(sizes)
        n += len(sizes)
        return list(range(n - len(sizes), n))

    standin = None
    if mask[0]:
        go, w, blk = alloc(_nbytes(grad_out), _nbytes(weight), _nbytes(inp))
        plan += [FREE(w), FREE(go)]
        (standin,) = alloc(_nbytes(inp))
        plan.append(FREE(blk))
    tail = []
    if mask[1]:
        in_copy = _blocked_input_copy(inp)
        idx = alloc(_nbytes(grad_out), *([in_copy] if in_copy else []), _nbytes(weight))
        plan += [FREE(i) for i in idx[:-1]]
        tail.append(FREE(idx[-1]))
    if standin is not None:
        plan.append(FREE(standin))
    return plan + [OUTPUTS] + tail


@register(aten.mkldnn_rnn_layer.default, ("cpu",),
          source="aten/src/ATen/native/mkldnn/RNN.cpp mkldnn_rnn_layer (oneDNN LSTM, training workspace)")
def _cpu_rnn_layer(args, kwargs, out):
    # nn.LSTM on the CPU (float32, or bf16 where oneDNN has it; no proj_size) runs one oneDNN LSTM
    # primitive per layer and direction (RNN.cpp `lstm` -> `lstm_mkldnn_stub` -> `mkldnn_rnn`). In
    # training it returns a workspace (the gates of every step, kept for backward) that the meta kernel
    # leaves empty, and it reorders weights; measured once per layout, workspace size included.
    return measure_cpu_scratch(aten.mkldnn_rnn_layer.default, args, kwargs, out) or []


@register(aten.mkldnn_rnn_layer_backward.default, ("cpu",),
          source="aten/src/ATen/native/mkldnn/RNN.cpp mkldnn_rnn_layer_backward")
def _cpu_rnn_layer_backward(args, kwargs, out):
    return measure_cpu_scratch(aten.mkldnn_rnn_layer_backward.default, args, kwargs, out) or []


# ---- CPU (aten's native kernels) -------------------------------------------------------------------

@register(aten.roll.default, ("cpu",), onednn=False,
          source="aten/src/ATen/native/TensorTransformations.cpp roll_cpu -> roll_common")
def _cpu_roll(args, kwargs, out):
    # a roll over n > 1 dims is n nested single-dim rolls, `roll(roll(x, d0), d1..)` (each a narrow + cat
    # into a new tensor): n - 1 full-size intermediates, all held until the last roll is made
    dims = args[2] if len(args) > 2 else kwargs.get("dims", ())
    n = len(dims) if isinstance(dims, (list, tuple)) else 1
    if n < 2:
        return []
    size = _nbytes(out)
    return [size] * (n - 1) + [OUTPUTS] + [FREE(i) for i in reversed(range(n - 1))]


@register(aten.repeat.default, ("cpu",), onednn=False,
          source="aten/src/ATen/native/TensorShape.cpp repeat (unfold views of the result, then copy_)")
def _cpu_repeat(args, kwargs, out):
    # the copy into the unfolded result allocates a few small host buffers while the result is live
    # (TAPAS: 64 bytes at its forward peak); measured once per layout
    return measure_cpu_scratch(aten.repeat.default, args, kwargs, out) or []


_PROMOTING_BINARY = (aten.add.Tensor, aten.sub.Tensor, aten.mul.Tensor, aten.div.Tensor, aten.div.Tensor_mode,
                     aten.maximum.default, aten.minimum.default, aten.eq.Tensor, aten.ne.Tensor, aten.lt.Tensor,
                     aten.le.Tensor, aten.gt.Tensor, aten.ge.Tensor)


# the host tensor a Python number becomes where an op takes a tensor (a "wrapped number")
WRAPPED_DTYPES = {bool: torch.bool, int: torch.int64, float: torch.float64, complex: torch.complex128}


def _cpu_promoted_inputs(args, kwargs, out):
    # TensorIterator on the CPU promotes an input of another dtype than the common one by a temporary
    # `.to(common_dtype)` copy of that input (compute_types, `promote_inputs_to_common_dtype_`), made
    # before the output and freed after the op (bf16 activation x fp32 weight, a bool mask times floats);
    # a Python number there is a 0-dim double/long/bool host tensor (a "wrapped number", memplan.trace.
    # recorder), copied the same way when the common dtype differs (`x * 0.5` on fp32: a 4-byte copy)
    a, b = args[0], args[1] if len(args) > 1 else None
    if not isinstance(a, torch.Tensor):
        return []
    if type(b) in WRAPPED_DTYPES:
        if type(a) is not torch.Tensor and not isinstance(a, FakeTensor):
            return []   # a wrapper subclass (DTensor): its local tensors come through here again
        common = torch.result_type(a, b)
        return [common.itemsize, OUTPUTS, FREE(0)] if common != WRAPPED_DTYPES[type(b)] else []
    if not isinstance(b, torch.Tensor) or a.dtype == b.dtype:
        return []
    common = torch.result_type(a, b)
    temps = [t.numel() * common.itemsize for t in (a, b) if t.dim() and t.dtype != common and t.numel()]
    if not temps:
        return []
    return [*temps, OUTPUTS, *[FREE(i) for i in range(len(temps))]]


for _op in _PROMOTING_BINARY:
    register(_op, ("cpu",), onednn=False,
             source="aten/src/ATen/TensorIterator.cpp compute_types (promote_inputs_to_common_dtype_)")(
        _cpu_promoted_inputs)


def _cpu_promoted_number(args, kwargs, out):
    # the in-place forms (`q /= 2.0`): only a wrapped number's copy is modelled
    return _cpu_promoted_inputs(args, kwargs, out) if len(args) > 1 and type(args[1]) in WRAPPED_DTYPES else []


for _op in (aten.add_.Tensor, aten.sub_.Tensor, aten.mul_.Tensor, aten.div_.Tensor):
    register(_op, ("cpu",), onednn=False,
             source="aten/src/ATen/TensorIterator.cpp compute_types (promote_inputs_to_common_dtype_)")(
        _cpu_promoted_number)


@register(aten.native_batch_norm.default, ("cpu",), onednn=False,
          source="aten/src/ATen/native/Normalization.cpp batch_norm_cpu_update_stats_template")
def _cpu_batch_norm(args, kwargs, out):
    # training forward: the batch's channel mean and variance sum (`_mean`, `_var_sum`, opmath dtype)
    # are two temporaries besides the saved statistics; measured once per layout
    training = args[5] if len(args) > 5 else kwargs.get("training", True)
    if not training:
        return []
    return measure_cpu_scratch(aten.native_batch_norm.default, args, kwargs, out) or []


def _cpu_sum_cast(args, kwargs, out):
    # a sum into another dtype than its input's (a boolean mask counted into int64, `dtype=` given)
    # first copies the whole input to that dtype (`make_reduction`: `self.to(in_dtype)`, in_dtype =
    # out_dtype on the CPU), after the output is allocated
    x = args[0]
    if not isinstance(out, torch.Tensor) or x.dim() == 0 or x.dtype == out.dtype or x.is_complex():
        return []
    return [OUTPUTS, x.numel() * out.element_size(), FREE(0)]


def _cpu_reduction(op, written=None):
    # what the CPU reduction kernels allocate besides their output: a reduction split over threads keeps
    # a partial result per thread (TensorIterator's two-pass reduce, `at::get_num_threads()` of them); a
    # sum into another dtype copies its input first (above); `mean` divides the sum in place by the count,
    # a number aten wraps into a 0-dim tensor (8 bytes, copied to the result's dtype), and for bf16 / fp16
    # sums in fp32: a float copy of the result and of the whole input (`mean_out`). Measured once per
    # layout, else the written rule
    def rule(args, kwargs, out):
        measured = measure_cpu_scratch(op, args, kwargs, out)
        if measured is not None:
            return measured
        return written(args, kwargs, out) if written is not None else []
    return rule


for _op, _written in ((aten.sum.default, _cpu_sum_cast), (aten.sum.dim_IntList, _cpu_sum_cast),
                      (aten.mean.default, None), (aten.mean.dim, None)):
    register(_op, ("cpu",), onednn=False, source="aten/src/ATen/native/ReduceOps.cpp sum_out -> make_reduction, "
             "mean_out; native/TensorIteratorReduce.cpp two_pass_reduction")(_cpu_reduction(_op, _written))


def _cpu_safe_softmax(args, kwargs, out):
    # the math SDPA's softmax (taken on the CPU with an attention mask or dropout): after the softmax it
    # finds fully masked rows, `all(self.isneginf(), dim, keepdim)` and a 0-dim zero of the output dtype,
    # three temporaries the meta kernel does not show (the boolean mask is as large as the scores);
    # measured once per layout, else that sequence (softmax in the input's dtype)
    measured = measure_cpu_scratch(_SAFE_SOFTMAX, args, kwargs, out)
    if measured is not None:
        return measured
    x, dim = args[0], args[1]
    if x.dim() == 0 or x.dtype != out.dtype:
        return []
    rows = x.numel() // max(x.shape[dim], 1)
    return [_nbytes(out), x.numel(), rows, out.element_size(), FREE(3), FREE(2), FREE(1), FREE(0), OUTPUTS]


_SAFE_SOFTMAX = compat.aten_op("_safe_softmax")   # torch >= 2.5; older math SDPA uses plain softmax
if _SAFE_SOFTMAX is not None:
    register(_SAFE_SOFTMAX, ("cpu",), onednn=False,
             source="aten/src/ATen/native/transformers/attention.cpp _safe_softmax")(_cpu_safe_softmax)


def _measured(op, only_strided: bool):
    # these CPU kernels make contiguous copies of strided inputs (`expect_contiguous()`), and the norm
    # backward kernels zero per-thread partial sums (`at::get_num_threads()` rows); the meta kernels show
    # neither: measured once per layout (with this process's thread count, as the real run has)
    def rule(args, kwargs, out):
        if only_strided and all(a.is_contiguous() for a in args if isinstance(a, torch.Tensor)):
            return []
        return measure_cpu_scratch(op, args, kwargs, out) or []
    return rule


for _name, _src, _strided in (
        ("native_layer_norm", "layer_norm.cpp layer_norm_cpu", False),
        ("native_layer_norm_backward", "layer_norm.cpp layer_norm_backward_cpu", False),
        ("native_group_norm", "group_norm.cpp native_group_norm", False),
        ("native_group_norm_backward", "group_norm.cpp native_group_norm_backward", False),
        # contiguous inputs: grad_input is allocated (`empty_like`), then allocated again for the
        # contiguous kernel and the first one freed on return, a transient of the input's size
        ("native_batch_norm_backward", "Normalization.cpp batch_norm_backward_cpu_template", False),
        ("embedding_dense_backward", "Embedding.cpp embedding_dense_backward_cpu", True),
        # per-thread blocks of scores and partial outputs (`at::get_num_threads()` x split sizes); the CPU
        # flash attention ops by these names are absent on torch 2.1 (no rule there)
        ("_scaled_dot_product_flash_attention_for_cpu",
         "transformers/attention.cpp _scaled_dot_product_flash_attention_cpu -> cpu/FlashAttentionKernel.cpp", False),
        ("_scaled_dot_product_flash_attention_for_cpu_backward",
         "transformers/attention.cpp _scaled_dot_product_flash_attention_cpu_backward -> "
         "cpu/FlashAttentionKernel.cpp", False)):
    _op = compat.aten_op(_name)
    if _op is not None:
        register(_op, ("cpu",), onednn=False, source=f"aten/src/ATen/native/{_src}")(_measured(_op, _strided))


# ---- CUDA / NPU ------------------------------------------------------------------------------------

# nn.LSTM traced for a GPU / NPU target reaches the oneDNN layer op (the trace runs on fake CPU tensors);
# its empty workspace output stands for what the device kernel keeps for backward, as long as autograd
# keeps it. Both sizes are APPROXIMATE and UNMEASURED (no GPU or NPU measured them):
# - CUDA: `_cudnn_rnn` (aten/src/ATen/native/cudnn/RNN.cpp) allocates a training `reserve` of the size
#   cuDNN reports (`cudnnGetRNNTempSpaceSizes`, v8 API; `cudnnGetRNNTrainingReserveSize` before), kept for
#   `_cudnn_rnn_backward`. cuDNN does not document its make-up; approximated by what it must hold, the
#   per-step gate activations and cell states: T x B x 5H elements per layer and direction. The forward /
#   backward `workspace` (a transient of cuDNN's size) is not modelled.
# - NPU: torch_npu's `npu_lstm` (op-plugin, CANN DynamicRNN) returns, besides y, the per-step h, c and the
#   gates i, j, f, o and tanh(c), all (T, B, H) and saved for `npu_lstm_backward`: 7 x T x B x H elements.
# nn.GRU / nn.RNN get no rule: for these targets they are traced as the CPU's native path runs them
# (per-step cell ops with their saved gates), an approximation of cuDNN's reserve / torch_npu's `npu_gru`
# (DynamicGRUV2: y, output_h, update, reset, new, hidden_new saved); docs/coverage.md says so.
_RNN_KEPT_PER_STEP = {"cuda": 5, "npu": 7}
_RNN_SOURCES = {
    "cuda": "approximate, unmeasured: cuDNN training reserve of aten/src/ATen/native/cudnn/RNN.cpp _cudnn_rnn "
            "(cudnnGetRNNTempSpaceSizes), taken as T x B x 5H per layer and direction",
    "npu": "approximate, unmeasured: torch_npu npu_lstm outputs saved for npu_lstm_backward (Ascend op-plugin, "
           "CANN DynamicRNN): h, c, i, j, f, o, tanh(c), 7 x T x B x H",
}


def _device_rnn_layer(family: str):
    def rule(args, kwargs, out):
        inp, hidden = args[0], args[10]
        train = args[15] if len(args) > 15 else kwargs.get("train", True)
        if not train or inp.dim() != 3:
            return []
        steps, batch = inp.shape[0], inp.shape[1]
        nbytes = _RNN_KEPT_PER_STEP[family] * steps * batch * hidden * inp.element_size()
        plan = Measured([OUTPUTS])
        plan.layouts = (None, None, None, ((nbytes,), (1,), 0, nbytes))
        return plan
    return rule


for _fam in ("cuda", "npu"):
    register(aten.mkldnn_rnn_layer.default, (_fam,), source=_RNN_SOURCES[_fam])(_device_rnn_layer(_fam))


# aten/src/ATen/cuda/CublasHandlePool.cpp `getChosenWorkspaceSize`: CUBLAS_WORKSPACE_CONFIG default
# ":4096:2:16:8" (2 x 4 MiB + 8 x 16 KiB) before Hopper, ":4096:8" (32 MiB) on sm90 / sm100. The workspace
# comes from the caching allocator on the first GEMM of a stream and is kept: it counts as allocated.
CUBLAS_WORKSPACE_BYTES = 4096 * 1024 * 2 + 16 * 1024 * 8
CUBLAS_WORKSPACE_BYTES_SM90 = 4096 * 8 * 1024
_HOPPER_OR_LATER = ("H100", "H200", "H800", "H20", "GH200", "B100", "B200")
_GEMMS = (aten.mm.default, aten.addmm.default, aten.bmm.default, aten.baddbmm.default)


def _cublas_workspace_rule(device_name: str | None):
    big = bool(device_name) and device_name.upper().startswith(_HOPPER_OR_LATER)
    size = CUBLAS_WORKSPACE_BYTES_SM90 if big else CUBLAS_WORKSPACE_BYTES
    state = {"done": False}

    def rule(args, kwargs, out):
        if state["done"]:
            return []
        state["done"] = True
        return [size, OUTPUTS]  # allocated once, never freed
    return rule


def device_rules(family: str, device_name: str | None = None) -> dict:
    """All op rules for a target: the registered ones plus per-trace stateful ones (cuBLAS workspace)."""
    rules = rules_for(family)
    if family == "cuda":
        ws = _cublas_workspace_rule(device_name)
        for op in _GEMMS:
            inner = rules.get(op)
            rules[op] = ws if inner is None else (lambda a, k, o, _i=inner: ws(a, k, o) or _i(a, k, o))
    return rules


def _sdpa_backend(q, k, v, attn_mask, dropout_p, is_causal, family: str) -> str:
    """The kernel PyTorch's CUDA dispatcher (aten/src/ATen/native/transformers/cuda/sdp_utils.cpp) would
    pick, simplified: flash for fp16/bf16 without an explicit mask and head_dim <= 256; memory-efficient
    for fp32 or with a mask; math otherwise. torch_npu routes SDPA to its fused attention
    (npu_fusion_attention), which saves about what flash saves (softmax max/sum instead of logsumexp)."""
    head = q.shape[-1]
    if q.dim() != 4 or head > 256 or head % 8:
        return "math"
    if q.dtype in (torch.float16, torch.bfloat16) and attn_mask is None:
        return "flash"
    if family == "npu" and q.dtype in (torch.float16, torch.bfloat16):
        return "flash"
    return "efficient" if family == "cuda" else "math"


_BACKWARD_ENTRIES = frozenset({torch.Tensor.backward, torch.autograd.backward, torch.autograd.grad})
"""The calls that run the autograd engine (each takes torch-function modes, `Tensor.backward` calls
`torch.autograd.backward`)."""


class DeviceFunctionMode(torch.overrides.TorchFunctionMode):
    """Routes `F.scaled_dot_product_attention` to the attention kernel the target device would run, so
    what is saved for backward is that kernel's (flash: output + logsumexp; math: the full attention
    matrix). Only active when the target is a GPU or NPU; the ops run on fake CPU tensors through their
    meta kernels."""

    def __init__(self, family: str):
        super().__init__()
        self.family = family

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.nn.functional.scaled_dot_product_attention and (
                "enable_gqa" not in kwargs or compat.sdpa_has_enable_gqa()):   # else: torch's own TypeError
            out = self._sdpa(*args, **kwargs)
            if out is not None:
                return out
        if func in _BACKWARD_ENTRIES:
            return self._backward(func, types, args, kwargs)
        return func(*args, **kwargs)

    def _backward(self, func, types, args, kwargs):
        """Run the autograd engine with this mode on the stack. torch takes a mode off its stack while the
        mode handles a call, and the engine keeps the modes that were on it when it started: without this,
        a forward recomputed in backward (checkpointing) would run the CPU's attention where the forward
        ran the device's, save other tensors (non-reentrant checkpointing raises CheckpointError: another
        number of tensors saved) and be traced with the wrong kernel. `Tensor.backward` goes on as
        `torch.autograd.backward`, which torch before 2.13 or so runs without handling it (the mode stays
        on); where that is handled too, `redispatch_function` calls it with the mode on, where torch has
        it, else it runs without the mode (as before)."""
        if func is torch.Tensor.backward:
            b = inspect.signature(torch.Tensor.backward).bind(*args, **kwargs)
            b.apply_defaults()
            a = b.arguments
            with self:
                return torch.autograd.backward(a["self"], a["gradient"], a["retain_graph"], a["create_graph"],
                                               inputs=a["inputs"])
        redispatch = compat.redispatch_torch_function()
        if redispatch is None:
            return func(*args, **kwargs)
        with self:
            return redispatch(func, types, args, kwargs)

    def _sdpa(self, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
        backend = _sdpa_backend(q, k, v, attn_mask, dropout_p, is_causal, self.family)
        if backend == "math":
            return None
        if enable_gqa and k.shape[-3] != q.shape[-3]:
            rep = q.shape[-3] // k.shape[-3]
            k, v = k.repeat_interleave(rep, dim=-3), v.repeat_interleave(rep, dim=-3)
        if backend == "flash":
            return aten._scaled_dot_product_flash_attention(q, k, v, dropout_p, is_causal, False,
                                                            scale=scale)[0]
        if attn_mask is not None and attn_mask.dtype == torch.bool:
            attn_mask = torch.zeros_like(attn_mask, dtype=q.dtype).masked_fill(~attn_mask, float("-inf"))
        return aten._scaled_dot_product_efficient_attention(q, k, v, attn_mask, True, dropout_p, is_causal,
                                                            scale=scale)[0]


_FN_STACK = tuple(getattr(torch._C, n, None) for n in (   # torch's function-mode stack (torch.overrides)
    "_len_torch_function_stack", "_get_function_stack_at", "_pop_torch_function_stack",
    "_push_on_torch_function_stack"))


def take_device_mode():
    """Take the DeviceFunctionMode off torch's function-mode stack when it is the innermost mode, and
    return it (None, stack untouched, otherwise). While it handles a call torch takes it off, so a
    dispatch mode handling that call's ops runs without it; the autograd engine's ops in backward do not
    come through it (`_backward` keeps it on the stack for the forward code backward may run), so there
    it would see every tensor method and op the dispatch modes call (several per op, all passed through).
    A dispatch mode takes it off for an op as forward does, and `put_back` after."""
    n_modes, mode_at, pop, _ = _FN_STACK
    if pop is None or mode_at is None:
        return None
    n = n_modes()
    if not n or type(mode_at(n - 1)) is not DeviceFunctionMode:
        return None
    return pop()


def put_back(mode) -> None:
    _FN_STACK[3](mode)


def function_mode(family: str):
    """The TorchFunctionMode for a target family, or None when the CPU's own kernels are the target."""
    return DeviceFunctionMode(family) if family in ("cuda", "npu") else None


# ---- measured scratch (CPU) ------------------------------------------------------------------------

MEASURE_LIMIT_BYTES = 256 * 2**20
"""Largest total of real input bytes memplan allocates to measure one kernel's scratch on the CPU."""

_MEASURED: dict[tuple, list] = {}


class Measured(list):
    """A plan measured from the real kernel, with the layouts of the real outputs (flattened in the
    op's output order): `(shape, stride, storage_offset, storage bytes)` per tensor, None otherwise."""

    layouts: tuple = ()


def _layout(x):
    if not isinstance(x, torch.Tensor):
        return None
    return (tuple(x.shape), tuple(x.stride()), x.storage_offset(), x.untyped_storage().nbytes())


def real_layouts(plan, out):
    """`out` with each fake output in the real kernel's layout where they differ (a measured plan knows
    it): the same shape in other strides (grad_input in the input's memory format), or a buffer the
    fake kernel leaves empty (oneDNN's RNN workspace). Other outputs are kept as they are."""
    layouts = getattr(plan, "layouts", ())
    if not layouts:
        return out
    flat, spec = tree_flatten(out)
    if len(flat) != len(layouts):
        return out
    changed = False
    for i, (f, lay) in enumerate(zip(flat, layouts)):
        if not isinstance(f, torch.Tensor) or lay is None:
            continue
        shape, stride, offset, nbytes = lay
        same_shape = tuple(f.shape) == shape
        if same_shape and tuple(f.stride()) == stride and f.untyped_storage().nbytes() == nbytes:
            continue
        if not same_shape and f.numel() != 0:
            continue   # a different shape with data: not a layout question, keep the fake kernel's
        storage = torch.empty(nbytes // f.element_size(), dtype=f.dtype, device=f.device)
        flat[i] = storage.as_strided(shape, stride, offset)
        changed = True
    return tree_unflatten(flat, spec) if changed else out


def _spec(x):
    if isinstance(x, torch.Tensor):
        return ("T", tuple(x.shape), tuple(x.stride()), x.dtype, x.storage_offset())
    if isinstance(x, (list, tuple)):
        return tuple(_spec(i) for i in x)
    return x


def _real_like(x):
    if isinstance(x, torch.Tensor):
        size = x.untyped_storage().nbytes() // max(x.element_size(), 1)
        base = torch.zeros(max(size, 1), dtype=x.dtype) if x.is_floating_point() else torch.ones(
            max(size, 1), dtype=x.dtype)
        return base.as_strided(x.shape, x.stride(), x.storage_offset())
    if isinstance(x, (list, tuple)):
        return type(x)(_real_like(i) for i in x)
    if isinstance(x, dict):   # keyword tensors (an attention mask) are real too
        return {k: _real_like(v) for k, v in x.items()}
    return x


def measure_cpu_scratch(func, args, kwargs, out) -> list | None:
    """Run `func` once for real on zero-filled tensors of the same shapes and strides under the CPU
    allocator's profiler, and turn what it allocated into a plan: every allocation the kernel frees is
    scratch; those it keeps are its outputs (replaced by same-size stand-ins until the fake outputs are
    recorded). Cached per op and argument layout. None when the inputs are too large to measure."""
    from torch._C._profiler import _EventType
    from torch.utils._python_dispatch import _disable_current_modes

    key = (func, _spec(args), _spec(tuple(sorted(kwargs.items()))))
    if key in _MEASURED:
        return _MEASURED[key]
    tensors = [a for a in tree_flatten((args, kwargs))[0] if isinstance(a, torch.Tensor)]
    outs = [o for o in tree_flatten(out)[0] if isinstance(o, torch.Tensor)]
    if sum(t.untyped_storage().nbytes() for t in tensors + outs) > MEASURE_LIMIT_BYTES:
        return None
    with _disable_current_modes():
        rargs, rkwargs = _real_like(list(args)), _real_like(dict(kwargs))
        try:
            with memory_profile() as prof:
                result = func(*rargs, **rkwargs)
        except Exception:  # noqa: BLE001 - the fake arguments are not ones the real kernel takes
            # (bf16 batch norm's saved statistics: float in a real run, the input's dtype on fake
            # tensors); the op is traced without its scratch, as it was before it was measured
            _MEASURED[key] = None
            return None
        layouts = tuple(_layout(r) for r in tree_flatten(result)[0])
        del result, rargs, rkwargs
    seq = []

    def walk(nodes):
        for n in nodes:
            if n.tag == _EventType.Allocation:
                if str(n.extra_fields.device) == "cpu" and n.extra_fields.alloc_size:
                    seq.append((n.start_time_ns, len(seq), n.extra_fields.alloc_size, n.extra_fields.ptr))
            else:
                walk(n.children)
    walk(prof.profiler.kineto_results.experimental_event_tree())
    seq.sort()
    plan, open_ids, idx = Measured(), {}, 0
    for _t, _s, size, alloc_id in seq:  # alloc_id: the block's address, reused only after its free
        if size > 0:
            open_ids.setdefault(alloc_id, []).append(idx)
            plan.append(size)
            idx += 1
        elif open_ids.get(alloc_id):
            plan.append(FREE(open_ids[alloc_id].pop()))
    # allocations never freed are the outputs: free their stand-ins just before the real outputs appear
    plan += [FREE(i) for ids in open_ids.values() for i in ids] + [OUTPUTS]
    plan.layouts = layouts
    _MEASURED[key] = plan
    return plan
