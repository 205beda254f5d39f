"""Device backends for `memplan validate`: run the real training step on cpu / cuda / npu and measure it.

Every backend runs the very step driver the tracer runs (`memplan.step.run`) and watches its phase
callbacks. What each one reads:

- **cpu**: PyTorch's own CPU-allocator accounting under `torch.profiler` (the measurement of
  `memplan.measure`), plus an independent cross-check: the allocator reporter's own running
  counter (`total_allocated`, kept by c10's `ProfiledCPUMemoryReporter` per pointer) gives the same peak
  as the sum of the event sizes. The CPU has no caching allocator: reserved is not measurable (None).
- **cuda**: `torch.cuda.reset_peak_memory_stats` at each phase start, `max_memory_allocated` /
  `max_memory_reserved` at its end, `mem_get_info` for device-level used memory (sampled at phase
  boundaries: a lower bound of the device's true peak, and it counts other processes too).
- **npu**: the same through `torch.npu.*` after a lazy `import torch_npu`. `torch.accelerator.*` memory
  functions do not work on released torch_npu (<= 26.1.0: "not a DeviceAllocator"), so they are not used.

Peaks are over the steady-state steps (step 2 onwards; the first step creates the optimizer state).
A failure (OOM, ACL/CANN/HCCL error, any exception from the user's step) is caught and returned as part of
the `Measurement`, with the phase / step / module it happened in and the memory held at that moment; the
device is emptied (`empty_cache`) after success and failure alike.

Known limitations: on cuda/npu the memory the process already held before the run (its baseline) is
subtracted from allocated and reserved; allocator blocks shared between the baseline and the run can make
reserved differ by up to one segment. Device-level used memory is sampled, not a true peak.
"""
from __future__ import annotations

import abc

import gc
import logging
import traceback
from dataclasses import dataclass, field

from memplan.compat import import_torch_npu, torch_npu_installed
from memplan.errors import UserError
from memplan.measure import PhaseRanges, allocation_events, ledger, memory_profile
from memplan.step import NoHooks, Target, run
from memplan.workload import TrainConfig, Workload

log = logging.getLogger("memplan")
from memplan.alloc.catalog import lookup

FAMILIES = ("cpu", "cuda", "npu")


@dataclass(frozen=True)
class Failure:
    """A run that died: what was raised, where, and how much memory was held."""

    exception_type: str                 # e.g. torch.OutOfMemoryError
    message: str                        # first line of the exception message
    text: str                           # the formatted exception (traceback), fed to memplan.diagnose
    phase: str
    step: int
    micro_step: int
    module: str | None = None           # innermost module of the traceback (forward only)
    allocated_bytes: int | None = None  # held by tensors when it died (cuda/npu), baseline excluded
    reserved_bytes: int | None = None   # held by the caching allocator when it died (cuda/npu)
    peak_allocated_bytes: int | None = None  # highest allocated reached in the failing step before dying

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in (
            "exception_type", "message", "phase", "step", "micro_step", "module", "allocated_bytes",
            "reserved_bytes", "peak_allocated_bytes")}


@dataclass(frozen=True)
class Measurement:
    """What one real run measured. Bytes are None where the backend cannot measure them."""

    backend: str                             # cpu | cuda | npu
    device_name: str                         # e.g. "cpu", "NVIDIA H200", "Ascend910B3"
    peak_allocated_bytes: int | None
    peak_reserved_bytes: int | None
    peak_phase: str | None
    phase_peaks: dict = field(default_factory=dict)            # phase -> peak allocated (steady state)
    phase_peaks_reserved: dict = field(default_factory=dict)   # phase -> peak reserved (cuda/npu)
    device_used_bytes: int | None = None      # max of (total - free) at phase boundaries (cuda/npu)
    device_total_bytes: int | None = None
    baseline_allocated_bytes: int = 0          # held before the run (subtracted)
    baseline_reserved_bytes: int = 0
    checks: dict = field(default_factory=dict)  # independent cross-checks of the measurement
    notes: tuple = ()
    failure: Failure | None = None


class _Where(NoHooks):
    """Remembers the current phase and the model (to name the module a failure happened in), and
    reports each phase to an optional progress callback."""

    def __init__(self, on_phase=None):
        self.phase_name, self.step, self.micro = "build", 0, 0
        self.model = None
        self.on_phase = on_phase

    def phase(self, phase, step, micro_step):
        self.phase_name, self.step, self.micro = phase, step, micro_step
        if self.on_phase is not None:
            self.on_phase(phase, step, micro_step)

    def model_built(self, model):
        self.model = model


def module_of(tb, model) -> str | None:
    """The innermost frame of `tb` whose `self` is a submodule of `model`, by qualified name."""
    if model is None or tb is None:
        return None
    names = {id(m): n for n, m in model.named_modules()}
    found = None
    while tb is not None:
        obj = tb.tb_frame.f_locals.get("self")
        if obj is not None and id(obj) in names:
            found = names[id(obj)] or "<model>"
        tb = tb.tb_next
    return found


def _exc_name(exc: BaseException) -> str:
    t = type(exc)
    mod = t.__module__
    if mod in ("builtins", "torch._C"):
        mod = "" if mod == "builtins" else "torch"
    return f"{mod}.{t.__qualname__}" if mod else t.__qualname__


def exception_text(exc: BaseException) -> str:
    """The exception as a log would show it, for memplan.diagnose: frame locations without the echoed
    source lines (a raise statement's source would repeat the message as a second incident)."""
    frames = traceback.extract_tb(exc.__traceback__)[-8:]
    head = ["Traceback (most recent call last):\n"]
    head += [f'  File "{f.filename}", line {f.lineno}, in {f.name}\n' for f in frames]
    name = _exc_name(exc)
    return "".join(head) + f"{name}: {exc}\n"


def _failure(exc: BaseException, where: _Where, **numbers) -> Failure:
    text = exception_text(exc)
    first = (str(exc).strip().splitlines() or [""])[0]
    return Failure(exception_type=_exc_name(exc), message=first[:500], text=text, phase=where.phase_name,
                   step=where.step, micro_step=where.micro, module=module_of(exc.__traceback__, where.model),
                   **numbers)


def _drop(exc: BaseException | None) -> None:
    """Free what a caught exception keeps alive (its frames hold the step's tensors)."""
    if exc is None:
        return
    tb = exc.__traceback__
    if tb is not None:
        traceback.clear_frames(tb)
    exc.__traceback__ = None


# ---------------------------------------------------------------------------------------------------
class CpuBackend:
    """The CPU allocator's accounting, read through the profiler (see `memplan.measure`)."""

    name = "cpu"

    def check(self) -> None:
        return None

    @property
    def target(self) -> Target:
        return Target(family="cpu", run_device="cpu")

    def device_name(self) -> str:
        return "cpu"

    def measure(self, workload: Workload, cfg: TrainConfig, capacity: int | None = None,
                on_phase=None) -> Measurement:
        class Hooks(PhaseRanges, _Where):
            def __init__(self):
                PhaseRanges.__init__(self)
                _Where.__init__(self, on_phase)

            def phase(self, phase, step, micro_step):
                _Where.phase(self, phase, step, micro_step)
                PhaseRanges.phase(self, phase, step, micro_step)

        hooks = Hooks()
        err = failure = None
        notes = []
        if capacity is not None:
            notes.append("the CPU backend cannot enforce a capacity: it only measures")
        with memory_profile() as prof:
            try:
                run(workload, cfg, hooks, self.target)
            except UserError:
                raise
            except Exception as exc:  # the user's step failed: a result, not a crash
                err = exc
                failure = _failure(exc, hooks)
            finally:
                hooks.close()
                hooks.model = None
        _drop(err)
        del err
        gc.collect()
        if failure is not None:
            part = ledger(prof, max(failure.step, 1))
            failure = _replace(failure, peak_allocated_bytes=part.peak_allocated_bytes
                               if failure.step >= 1 else part.run_peak_allocated_bytes)
            return Measurement("cpu", "cpu", None, None, None, notes=tuple(notes), failure=failure)
        m = ledger(prof, cfg.steps)
        counter_peak, end_diff = _counter_check(prof, cfg.steps)
        checks = {
            "ledger_end_diff_bytes": end_diff,
            "allocator_counter_peak_bytes": counter_peak,
            "allocator_counter_peak_diff_bytes": None if counter_peak is None
            else counter_peak - m.peak_allocated_bytes,
            "allocator_events": m.n_events,
        }
        return Measurement("cpu", "cpu", m.peak_allocated_bytes, None, m.peak_phase, dict(m.phase_peaks), {},
                           checks=checks, notes=tuple(notes))


def _replace(obj, **kw):
    from dataclasses import replace

    return replace(obj, **kw)


def _counter_check(prof, steps: int) -> tuple[int | None, int | None]:
    """Cross-check of the event ledger against the allocator reporter's own running counter.

    c10's `ProfiledCPUMemoryReporter` keeps `total_allocated` per pointer, process-wide and across
    profiling sessions, so it starts from whatever earlier sessions left; its level before the run's first
    event is the baseline. Returns (the steady-state peak read from the counter, |counter change over the
    run - the sum of the event sizes|): the first equals `ledger`'s peak and the second is 0 when the
    events are complete.
    """
    rows = [(t, q, total, size, label.split("::")[1]) for t, q, size, total, label in allocation_events(prof)]
    if not rows:
        return None, None
    run_base = rows[0][2] - rows[0][3]
    end_diff = abs((rows[-1][2] - run_base) - sum(r[3] for r in rows))
    in_steps = {str(i) for i in range(1, steps + 1)}  # the window of the estimate: every optimizer step
    window = [(total, size) for _t, _s, total, size, st in rows if st in in_steps]
    if not window:
        return None, end_diff
    first_total, first_size = window[0]
    base = first_total - first_size        # the counter just before the first step's first event
    return max(base, max(t for t, _ in window)) - run_base, end_diff


# ---------------------------------------------------------------------------------------------------
class _AcceleratorBackend(abc.ABC):
    """cuda and npu: the caching allocator's own statistics, reset per phase. Subclasses name the
    device module (`torch.cuda` / `torch.npu`) and how to check the device is present."""

    name = ""

    @abc.abstractmethod
    def _mod(self):
        """The torch device module whose memory functions are used."""

    @abc.abstractmethod
    def check(self) -> None:
        """Raise UserError (one line) when the backend is not available here."""

    @property
    def target(self) -> Target:
        return Target(family=self.name, run_device=self.name)

    def device_name(self) -> str:
        mod = self._mod()
        try:
            return str(mod.get_device_name())
        except RuntimeError as exc:   # a faulted or busy device: the family name will do
            log.debug("get_device_name failed: %s", exc)
            return self.name

    def cleanup(self) -> None:
        """Free cached memory so the device is clean for whatever runs next."""
        mod = self._mod()
        gc.collect()
        try:
            mod.synchronize()
        except RuntimeError as exc:  # a faulted device may refuse to synchronize; still try to free
            log.debug("synchronize failed during cleanup: %s", exc)
        try:
            mod.empty_cache()
        except RuntimeError as exc:
            log.debug("empty_cache failed during cleanup: %s", exc)

    def _used(self, mod) -> tuple[int | None, int | None]:
        fn = getattr(mod, "mem_get_info", None)
        if fn is None:
            return None, None
        try:
            free, total = fn()
        except RuntimeError as exc:   # mem_get_info is not supported everywhere (e.g. some MIG setups)
            log.debug("mem_get_info failed: %s", exc)
            return None, None
        return int(total - free), int(total)

    def measure(self, workload: Workload, cfg: TrainConfig, capacity: int | None = None,
                on_phase=None) -> Measurement:
        cfg.validate()
        mod = self._mod()
        self.cleanup()
        base_alloc, base_res = int(mod.memory_allocated()), int(mod.memory_reserved())
        _, total = self._used(mod)
        notes = []
        fraction_set = _enforce_capacity(mod, capacity, total, notes)
        hooks = _DevicePeaks(mod, base_alloc, base_res, lambda: self._used(mod)[0], on_phase)
        err = failure = None
        try:
            mod.reset_peak_memory_stats()
            run(workload, cfg, hooks, self.target)
            hooks.close_phase()
        except UserError:
            raise
        except Exception as exc:  # noqa: BLE001 - the step failed (OOM, ACL error): a result, not a crash
            err = exc
            failure = _failure(exc, hooks, **_numbers_after_failure(mod, base_alloc, base_res))
        finally:
            hooks.model = None
            _drop(err)
            err = None
            if fraction_set:
                mod.set_per_process_memory_fraction(1.0)
            self.cleanup()
        name = self.device_name()
        if failure is not None:
            return Measurement(self.name, name, None, None, None, device_total_bytes=total,
                               baseline_allocated_bytes=base_alloc, baseline_reserved_bytes=base_res,
                               notes=tuple(notes), failure=failure)
        peak_phase = max(hooks.alloc, key=hooks.alloc.get) if hooks.alloc else None
        notes.append("device-level used memory is sampled at phase boundaries and includes other processes")
        return Measurement(
            self.name, name,
            max(hooks.alloc.values()) if hooks.alloc else None,
            max(hooks.res.values()) if hooks.res else None,
            peak_phase, dict(hooks.alloc), dict(hooks.res), device_used_bytes=hooks.used,
            device_total_bytes=total, baseline_allocated_bytes=base_alloc, baseline_reserved_bytes=base_res,
            checks={"num_ooms": _stat(mod, "num_ooms"), "num_alloc_retries": _stat(mod, "num_alloc_retries")},
            notes=tuple(notes),
        )


def _enforce_capacity(mod, capacity: int | None, total: int | None, notes: list) -> bool:
    """Cap the real allocator at `capacity` through the per-process memory fraction (a real OOM, not a
    simulated one); True when a fraction was set (reset it afterwards)."""
    if capacity is None or not total:
        return False
    if capacity >= total:
        notes.append(f"capacity {capacity} B is not below the device's {total} B: not enforced")
        return False
    mod.set_per_process_memory_fraction(capacity / total)
    return True


def _numbers_after_failure(mod, base_alloc: int, base_res: int) -> dict:
    try:
        return dict(allocated_bytes=int(mod.memory_allocated()) - base_alloc,
                    reserved_bytes=int(mod.memory_reserved()) - base_res,
                    peak_allocated_bytes=int(mod.max_memory_allocated()) - base_alloc)
    except RuntimeError as exc:  # the device itself may be unusable after a kernel fault
        log.debug("memory counters unreadable after the failure: %s", exc)
        return {}


class _DevicePeaks(_Where):
    """Per-phase peaks of the steady-state steps from the device module's counters (`torch.cuda` /
    `torch.npu`), reset at every phase boundary; device-level used memory sampled at the boundaries."""

    def __init__(self, mod, base_alloc: int, base_res: int, used_now, on_phase=None):
        super().__init__(on_phase)
        self.mod, self.base_alloc, self.base_res, self.used_now = mod, base_alloc, base_res, used_now
        self.alloc: dict[str, int] = {}
        self.res: dict[str, int] = {}
        self.used = None
        self.cur: tuple[str, int] | None = None

    def close_phase(self):
        mod = self.mod
        if self.cur is not None and self.cur[1] >= 2:   # steady-state steps only
            ph = self.cur[0]
            a = int(mod.max_memory_allocated()) - self.base_alloc
            r = int(mod.max_memory_reserved()) - self.base_res
            self.alloc[ph] = max(self.alloc.get(ph, 0), a)
            self.res[ph] = max(self.res.get(ph, 0), r)
        used = self.used_now()
        if used is not None:
            self.used = used if self.used is None else max(self.used, used)

    def phase(self, phase, step, micro_step):
        self.close_phase()
        super().phase(phase, step, micro_step)
        self.cur = (phase, step)
        self.mod.reset_peak_memory_stats()


def _stat(mod, key: str):
    try:
        return int(mod.memory_stats().get(key, 0))
    except RuntimeError as exc:
        log.debug("memory_stats()[%s] unreadable: %s", key, exc)
        return None


class CudaBackend(_AcceleratorBackend):
    name = "cuda"

    def _mod(self):
        import torch

        return torch.cuda

    def check(self) -> None:
        import torch

        if not torch.cuda.is_available():
            raise UserError("--device cuda: no CUDA device is visible to this torch build "
                            f"(torch {torch.__version__}); run on a GPU machine or use --device cpu")


class NpuBackend(_AcceleratorBackend):
    name = "npu"

    def _mod(self):
        import torch

        return torch.npu

    def check(self) -> None:
        import torch

        import_torch_npu("--device npu")
        if not torch.npu.is_available():
            raise UserError("--device npu: torch_npu is installed but no Ascend NPU is visible")


_BACKENDS = {"cpu": CpuBackend, "cuda": CudaBackend, "npu": NpuBackend}


def detect_family() -> str:
    """cuda when a CUDA device is visible, else npu when torch_npu imports and sees one, else cpu."""
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if torch_npu_installed():
        try:
            NpuBackend().check()
            return "npu"
        except UserError:
            pass
    return "cpu"


def get_backend(family: str | None = None):
    """The backend for a device family (None: detect), checked: an unavailable one is a UserError."""
    family = (family or detect_family()).lower()
    if family not in _BACKENDS:
        raise UserError(f"unknown backend {family!r} (choose from {', '.join(FAMILIES)})")
    b = _BACKENDS[family]()
    b.check()
    return b


def family_of(device: str | None) -> str | None:
    """cpu / cuda / npu for a --device value (a family or a catalog name); None for 'detect'."""
    if device is None or device.lower() == "auto":
        return None
    d = device.lower()
    if d in FAMILIES or d.split(":")[0] in FAMILIES:
        return d.split(":")[0]

    return lookup(device).family


__all__ = ["Measurement", "Failure", "exception_text", "CpuBackend", "CudaBackend", "NpuBackend", "get_backend",
           "detect_family", "family_of", "module_of"]
