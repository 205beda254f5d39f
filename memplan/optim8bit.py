"""A memory model of bitsandbytes' 8-bit AdamW (`adamw_8bit`, `adamw_bnb_8bit`, `paged_adamw_8bit`).

bitsandbytes' kernels do not run on fake tensors (and need its CUDA library), so memplan runs this
stand-in: an optimizer that holds exactly the state bitsandbytes allocates
(`bitsandbytes/optim/optimizer.py`, `Optimizer2State.init_state`, block-wise mode): for a parameter of
at least `min_8bit_size` (4096) elements, two uint8 moments shaped like the parameter and two fp32
`absmax` vectors of ceil(numel / 256) blocks; smaller parameters keep two fp32 moments. The shared
256-entry quantile maps (`qmap1`, `qmap2`) are one pair per optimizer. The update runs in place (the
fused kernel allocates nothing), so no scratch memory is modelled. The values are not Adam's.

Known limitations: paged state lives in unified memory that the driver can evict to the host; memplan
counts it on the device (the upper bound).
"""
from __future__ import annotations

import math

import torch

MIN_8BIT_SIZE = 4096   # Optimizer8bit default min_8bit_size
BLOCK = 256            # block-wise quantisation block (init_state: blocks = ceil(n / 256))


class AdamW8bitStateModel(torch.optim.Optimizer):
    def __init__(self, params, lr: float = 1e-3, weight_decay: float = 0.0):
        super().__init__(params, {"lr": lr, "weight_decay": weight_decay})
        self._qmaps = None

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    self._init_state(p, state)
                p.add_(p.grad, alpha=-group["lr"])   # in place, like the fused kernel
        return None

    def _init_state(self, p, state) -> None:
        state["step"] = 0
        if p.numel() < MIN_8BIT_SIZE:
            state["state1"] = torch.zeros_like(p, dtype=torch.float32)
            state["state2"] = torch.zeros_like(p, dtype=torch.float32)
            return
        if self._qmaps is None:
            self._qmaps = (torch.zeros(256, dtype=torch.float32, device=p.device),
                           torch.zeros(256, dtype=torch.float32, device=p.device))
        blocks = math.ceil(p.numel() / BLOCK)
        state["state1"] = torch.zeros_like(p, dtype=torch.uint8)
        state["state2"] = torch.zeros_like(p, dtype=torch.uint8)
        state["qmap1"], state["qmap2"] = self._qmaps
        state["absmax1"] = torch.zeros(blocks, dtype=torch.float32, device=p.device)
        state["absmax2"] = torch.zeros(blocks, dtype=torch.float32, device=p.device)
