"""Packed sequences (`torch.nn.utils.rnn.pack_padded_sequence` / `pad_packed_sequence`) on fake tensors.

A packed sequence's `batch_sizes` is a small int64 CPU tensor that aten's C++ code reads element by
element (`data_ptr`): the packed RNN kernels (`lstm.data`, `gru.data`, `rnn_tanh.data`: RNN.cpp
`PackedLayer`), `_pad_packed_sequence` and `_pack_padded_sequence_backward` (PackedSequence.cpp). A fake
tensor has no data, so here `batch_sizes` is a real tensor (as small as in the real run, and recorded
like any other allocation), computed from the lengths' value shadow (memplan.trace.datadep rule 1),
or, for lengths nobody knows, as if every sequence were full (rule 3, an upper bound).

`_pad_packed_sequence` allocates its `lengths` output with `at::empty` and writes it through `data_ptr`,
which a fake tensor cannot take, so while tracing `torch._VF._pad_packed_sequence` is replaced by the
same algorithm written with tensor ops (`padded_sequences()`); the allocations are the real kernel's.
"""
from __future__ import annotations

import contextlib
import functools

import torch
from torch.utils._python_dispatch import _disable_current_modes

_OP = "aten._pack_padded_sequence"


def pack_padded_sequence(sz, args, kwargs):
    """aten/src/ATen/native/PackedSequence.cpp `_pack_padded_sequence` replayed on fake tensors: the
    batch sizes (`lengths[0]` int64), one contiguous copy per run of equal lengths, their `cat`."""
    inp, lengths = args[0], args[1]
    batch_first = args[2] if len(args) > 2 else kwargs.get("batch_first", False)
    x = inp.transpose(0, 1) if batch_first else inp
    steps_n, batch = x.shape[0], x.shape[1]
    s = sz.shadow(lengths)
    if s is None:
        sz.exact = False
        lens = [steps_n] * batch
    else:
        lens = sz.real(lambda t: [int(v) for v in t.tolist()], s)
    with _disable_current_modes():
        batch_sizes = torch.tensor([sum(v > t for v in lens) for t in range(lens[0])], dtype=torch.long)
    sz.see(batch_sizes, _OP)
    steps, prev = [], 0
    for i in range(batch):
        n = lens[batch - 1 - i]
        if n > prev:
            step = x[prev:n, :batch - i].contiguous().view(-1, *x.shape[2:])
            sz.see(step, _OP)
            steps.append(step)
            prev = n
    data = torch.cat(steps)
    sz.see(data, _OP)
    return data, batch_sizes


def _pad_packed_sequence(attach, data, batch_sizes, batch_first, padding_value, total_length):
    """PackedSequence.cpp `_pad_packed_sequence`, op for op (it is CompositeImplicitAutograd: the real
    run's autograd graph is made of these same ops); `lengths` is fake with a real value shadow."""
    sizes = [int(v) for v in batch_sizes.tolist()]
    max_batch, max_real = sizes[0], len(sizes)
    max_seq = max_real
    if total_length > 0:
        if total_length < max_real:
            raise RuntimeError(f"Expected total_length to be at least the length of the longest sequence "
                               f"input, but got total_length={total_length} and max sequence length being "
                               f"{max_real}")
        max_seq = total_length
    rest = list(data.shape[1:])
    output = data.new_full([max_seq, max_batch, *rest], padding_value)
    lengths = torch.empty(max_batch, dtype=batch_sizes.dtype)
    values = [0] * max_batch
    offset, prev_bs, prev_i = 0, max_batch, 0
    for i in range(max_real + 1):
        bs = sizes[i] if i != max_real else 0
        if bs != prev_bs:
            n = prev_bs * (i - prev_i)
            tmp = data[offset:offset + n]
            output[prev_i:i, :prev_bs].copy_(tmp.view([i - prev_i, prev_bs, *rest]))
            offset += n
            prev_i = i
        for j in range(bs, prev_bs):
            values[j] = i
        prev_bs = bs
    with _disable_current_modes():
        real = torch.tensor(values, dtype=batch_sizes.dtype)
    attach(lengths, real)
    if batch_first:
        output = output.transpose(0, 1)
    return output, lengths


@contextlib.contextmanager
def padded_sequences(attach):
    """While active, `torch._VF._pad_packed_sequence` runs the op-for-op replica above;
    `attach(fake, real)` gives a fake tensor its value shadow (the recording mode's)."""
    vf = torch._VF
    had = "_pad_packed_sequence" in vars(vf)
    prev = vars(vf).get("_pad_packed_sequence")
    vf._pad_packed_sequence = functools.partial(_pad_packed_sequence, attach)
    try:
        yield
    finally:
        if had:
            vf._pad_packed_sequence = prev
        else:
            del vf._pad_packed_sequence
