"""Largest micro-batch (or longest sequence) that fits: fit the growth, predict, verify, correct.

Lightning's BatchSizeFinder and accelerate's finder look for the batch size by crashing (up to 25 trials
of 3 real steps, or one OOM per 10 % shrink). Here every trial is a fake-tensor trace, and few are needed:

1. trace two small sizes (the given one x1 and 2*x1);
2. fit each phase's peak as an affine function of the size (peak(x) = a + s*x per phase, the step's peak
   being their maximum, so a peak that moves from `optimizer.step()` at small batch to backward at
   large batch is followed), scale by the allocator's overhead (device total / allocated at x2), and
   predict the largest size within the budget;
3. verify by tracing the prediction and its neighbour (prediction+1 if it fits, -1 if it does not);
4. if the verification disagrees, correct with secant steps between the closest fitting and failing
   sizes, falling back to bisection, until they are neighbours.

Sequence length grows quadratically wherever attention matrices are stored, so a sequence-length search
is usually "not affine" and leans on step 4.

Known limitations: one size variable at a time; a size whose trace fails counts as "does not fit".
"""
from __future__ import annotations

from dataclasses import dataclass, field

from memplan.errors import TraceError, UserError
from memplan.workload import TrainConfig

AFFINE_TOLERANCE = 0.02   # |predicted - traced| / traced at the verified sizes
MAX_PROBES = 14


@dataclass(frozen=True)
class GrowthFit:
    """Peak memory as a function of one size variable, from two traced sizes."""

    var: str                                  # batch_size | seq_len
    xs: tuple[int, int]
    phase_lines: dict                         # phase -> (intercept bytes, slope bytes per unit), allocated
    overhead_ratio: float                     # device total / allocated peak at the larger size

    def predict_allocated(self, x: int) -> int:
        return int(max(a + s * x for a, s in self.phase_lines.values()))

    def predict_total(self, x: int) -> int:
        return int(self.predict_allocated(x) * self.overhead_ratio)

    @property
    def slope(self) -> float:
        """Growth of the step's peak per unit around the fitted sizes (bytes)."""
        lo, hi = self.xs
        return (self.predict_allocated(hi) - self.predict_allocated(lo)) / max(hi - lo, 1)

    def largest_within(self, budget: int, multiple: int = 1, max_value: int = 1 << 20) -> int:
        """Largest multiple of `multiple` whose predicted device total is within `budget` (0: none)."""
        limit = budget / self.overhead_ratio
        best = float(max_value)
        for a, s in self.phase_lines.values():
            if s <= 0:
                if a > limit:
                    return 0
                continue
            best = min(best, (limit - a) / s)
        if best < multiple:
            return 0
        return min(int(best // multiple) * multiple, max_value)


def fit_growth(var: str, p1: tuple[int, dict, int, int], p2: tuple[int, dict, int, int]) -> GrowthFit:
    """Fit from two points `(x, phase_peaks, allocated_peak, device_total)`."""
    (x1, ph1, a1, _t1), (x2, ph2, a2, t2) = sorted([p1, p2], key=lambda p: p[0])
    if x1 == x2:
        raise ValueError("two different sizes are needed to fit growth")
    lines = {}
    for phase in set(ph1) & set(ph2):
        s = (ph2[phase] - ph1[phase]) / (x2 - x1)
        lines[phase] = (ph1[phase] - s * x1, s)
    if not lines:
        s = (a2 - a1) / (x2 - x1)
        lines["step"] = (a1 - s * x1, s)
    ratio = t2 / a2 if a2 > 0 else 1.0
    return GrowthFit(var=var, xs=(x1, x2), phase_lines=lines, overhead_ratio=max(ratio, 1.0))


@dataclass(frozen=True)
class SizeSearch:
    """The answer of `largest_fitting`."""

    var: str
    best: int | None                          # None: not even the smallest size fits
    fit: GrowthFit | None
    predicted: int | None                     # the fit's first prediction
    probes: tuple = ()                        # (size, device total or None if untraceable, fits), in order
    affine: bool | None = None
    max_error_pct: float | None = None        # worst |predicted - traced| / traced at verified sizes
    capped: bool = False                      # best == max_value: the search stopped at the cap
    notes: tuple = field(default=())

    @property
    def n_probes(self) -> int:
        return len(self.probes)

    def to_dict(self) -> dict:
        return {
            "var": self.var, "best": self.best, "predicted": self.predicted, "affine": self.affine,
            "max_error_pct": self.max_error_pct, "capped": self.capped,
            "probes": [{"value": x, "device_total_bytes": t, "fits": f} for x, t, f in self.probes],
            "fit": None if self.fit is None else {
                "xs": list(self.fit.xs), "overhead_ratio": round(self.fit.overhead_ratio, 4),
                "phase_lines": {p: [int(a), int(s)] for p, (a, s) in self.fit.phase_lines.items()},
                "slope_bytes_per_unit": int(self.fit.slope)},
            "notes": list(self.notes),
        }


def _set(cfg: TrainConfig, var: str, x: int) -> TrainConfig:
    return cfg.with_(**{var: x})


class _Prober:
    """Traces sizes of one variable once each and remembers what fit."""

    def __init__(self, ev, cfg: TrainConfig, var: str):
        self.ev, self.cfg, self.var = ev, cfg, var
        self.budget = ev.budget_bytes
        self.probes: list[tuple[int, int | None, bool]] = []
        self.seen: dict[int, bool] = {}
        self.notes: list[str] = []

    def __call__(self, x: int) -> bool:
        if x in self.seen:
            return self.seen[x]
        try:
            total = self.ev.total(_set(self.cfg, self.var, x))
        except TraceError as exc:
            self.notes.append(f"{self.var} {x} could not be traced ({str(exc).splitlines()[0][:120]}); "
                              "counted as not fitting")
            total = None
        ok = total is not None and total <= self.budget
        self.seen[x] = ok
        self.probes.append((x, total, ok))
        return ok

    def point(self, x: int):
        est = self.ev.estimate(_set(self.cfg, self.var, x))
        return (x, dict(est.phase_peaks), est.peak_allocated_bytes, est.device_total_bytes)

    def result(self, best, fit=None, predicted=None, affine=None, err=None, capped=False) -> SizeSearch:
        return SizeSearch(self.var, best, fit, predicted, tuple(self.probes), affine, err, capped=capped,
                          notes=tuple(self.notes))


def _start(ev, cfg: TrainConfig, var: str, multiple: int) -> int:
    if var not in ("batch_size", "seq_len"):
        raise UserError(f"cannot search over {var!r}")
    x1 = getattr(cfg, var)
    if var == "seq_len" and x1 is None:
        x1 = ev.workload.default_seq_len
        if x1 is None or not ev.workload.accepts_seq_len:
            raise UserError("--seq-len-search needs a model whose make_batch takes seq_len (and a --seq-len to start from)")
    return max(multiple, (x1 // multiple) * multiple)


def largest_fitting(ev, cfg: TrainConfig, var: str = "batch_size", *, multiple: int = 1,
                    max_value: int = 1 << 16) -> SizeSearch:
    """Largest `var` (a multiple of `multiple`, at most `max_value`) whose traced peak fits `ev`'s budget."""
    x1 = _start(ev, cfg, var, multiple)
    probe = _Prober(ev, cfg, var)
    # 1. two small sizes
    if probe(x1):
        x2 = min(2 * x1, max_value)
        if x2 == x1:
            return probe.result(x1, capped=True)
        probe(x2)
    else:
        if x1 == multiple:
            return probe.result(None)
        x2, x1 = x1, multiple
        if not probe(x1):
            return probe.result(None)
    try:
        fit = fit_growth(var, probe.point(x1), probe.point(x2))
    except TraceError:
        fit = None
    predicted = fit.largest_within(probe.budget, multiple, max_value) if fit is not None else None
    # 2-3. verify the prediction and its neighbour
    if predicted:
        if probe(predicted):
            if predicted + multiple <= max_value:
                probe(predicted + multiple)
        elif predicted - multiple >= multiple:
            probe(predicted - multiple)
    # 4. correct: secant steps between the closest fitting and failing sizes, bisection as a fallback
    _correct(probe, multiple, max_value)
    lo = max((x for x, ok in probe.seen.items() if ok), default=None)
    if len(probe.probes) >= MAX_PROBES:
        probe.notes.append(f"stopped after {MAX_PROBES} traces; the answer is the largest size traced that fits")
    affine, err = _affine_quality(fit, probe, {x1, x2})
    return probe.result(lo, fit, predicted or None, affine, err, capped=lo is not None and lo >= max_value)


def _correct(probe: _Prober, multiple: int, max_value: int) -> None:
    """Secant steps between the closest fitting and failing sizes, bisection as a fallback."""
    ev, cfg, var, seen, budget = probe.ev, probe.cfg, probe.var, probe.seen, probe.budget
    while len(probe.probes) < MAX_PROBES:
        lo = max((x for x, ok in seen.items() if ok), default=None)
        his = [x for x, ok in seen.items() if not ok and (lo is None or x > lo)]
        hi = min(his) if his else None
        if lo is None:
            break
        if hi is None:
            if lo >= max_value:
                break
            cand = _secant(ev, cfg, var, seen, lo, None, budget, multiple)
            if cand is None or cand <= lo:
                cand = min(2 * lo, max_value)
            cand = min(cand, max_value)
        else:
            if hi - lo <= multiple:
                break
            cand = _secant(ev, cfg, var, seen, lo, hi, budget, multiple)
            if cand is None or not lo < cand < hi:
                cand = lo + ((hi - lo) // (2 * multiple)) * multiple
                cand = max(cand, lo + multiple)
        probe(cand)


def _affine_quality(fit, probe: _Prober, fitted: set) -> tuple[bool | None, float | None]:
    """How good the affine prediction was at the sizes traced after the fit: (within tolerance, max error %)."""
    if fit is None:
        return None, None
    errs = [abs(fit.predict_total(x) - total) / total for x, total, _ok in probe.probes
            if x not in fitted and total is not None]
    if not errs:
        return None, None
    err = round(100 * max(errs), 2)
    affine = max(errs) <= AFFINE_TOLERANCE
    if not affine:
        probe.notes.append(
            f"memory does not grow affinely in {probe.var.replace('_', ' ')}: the two-point fit was off by up to "
            f"{err:.1f} % at the verified sizes, so the answer was corrected by further traces")
    return affine, err


def _secant(ev, cfg, var, seen, lo, hi, budget, multiple) -> int | None:
    """Where the line through the two traced sizes nearest the boundary crosses the budget."""
    traced = sorted(x for x in seen if ev.traced(_set(cfg, var, x)) and ev_total_ok(ev, cfg, var, x))
    if len(traced) < 2:
        return None
    # the two sizes closest to the boundary: the largest that fit and the smallest that does not
    pts = [x for x in traced if x <= lo][-1:] + ([x for x in traced if hi is not None and x >= hi][:1])
    if len(pts) < 2:
        pts = [x for x in traced if x <= lo][-2:]
    if len(pts) < 2:
        return None
    xa, xb = pts
    ta, tb = ev.total(_set(cfg, var, xa)), ev.total(_set(cfg, var, xb))
    if tb == ta:
        return None
    s = (tb - ta) / (xb - xa)
    if s <= 0:
        return None
    x = xa + (budget - ta) / s
    return int(x // multiple) * multiple


def ev_total_ok(ev, cfg, var, x) -> bool:
    try:
        ev.total(_set(cfg, var, x))
        return True
    except TraceError:
        return False
