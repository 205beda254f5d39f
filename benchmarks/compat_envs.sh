#!/usr/bin/env bash
# Build one virtual environment per torch version for the compatibility matrix (benchmarks/compat.py).
#
#   bash benchmarks/compat_envs.sh                 # every version below, skipping finished venvs
#   bash benchmarks/compat_envs.sh 2.1.2 2.4.1     # only these
#   COMPAT_VENVS=/somewhere bash benchmarks/compat_envs.sh
#
# Rerunnable: a venv that finished (has .compat-ok) is left alone; a half-built one is rebuilt.
# One download at a time. Venvs live OUTSIDE the repository (default /work/venvs/torch-<version>).
# A pip configuration that caps torch with a constraint file (this project's machines cap it at 2.14.1)
# refuses the newest torch: build that one with PIP_CONSTRAINT=/dev/null.
#
# Lightest install that imports: the registry has only CUDA builds of these torch releases, and their
# libtorch_cuda.so is linked against the nvidia-* libraries, so `import torch` needs them even on a
# CPU-only machine (torch/__init__.py's _load_global_deps raises OSError without them). What is left
# out is triton (compiler only; memplan never compiles), which saves a few hundred MB per venv.
#
# transformers: the newest line whose declared torch floor admits this torch
#   5.x       needs torch>=2.5 (its METADATA: `torch>=2.5; extra == "torch"`)
#   4.57      needs torch>=2.2
#   4.46      the last line that still imports on torch 2.1
set -euo pipefail

ROOT="${COMPAT_VENVS:-/work/venvs}"
PYTHON="${COMPAT_PYTHON:-python3}"
VERSIONS=("$@")
if [ ${#VERSIONS[@]} -eq 0 ]; then
    VERSIONS=(2.1.2 2.3.1 2.4.1 2.5.1 2.6.0 2.7.1 2.8.0 2.9.1 2.10.0 2.11.0 2.12.1 2.14.1 2.15.0)
fi

transformers_for() {
    case "$1" in
        2.1.*) echo "transformers==4.46.3" ;;
        2.2.*|2.3.*|2.4.*) echo "transformers==4.57.6" ;;
        *) echo "transformers==5.18.0" ;;
    esac
}

numpy_for() {
    case "$1" in
        2.1.*|2.2.*|2.3.*) echo "numpy<2" ;;   # built against NumPy 1.x
        *) echo "numpy" ;;
    esac
}

# Requirements of the installed torch (its METADATA), markers evaluated here, triton left out.
torch_runtime_deps() {
    "$1/bin/python" - <<'EOF'
import importlib.metadata as md
from pip._vendor.packaging.requirements import Requirement
for line in md.requires("torch") or []:
    req = Requirement(line)
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        continue
    if req.name.lower().startswith("triton"):
        continue
    print(str(req).split(";")[0].strip())
EOF
}

mkdir -p "$ROOT"
for v in "${VERSIONS[@]}"; do
    dir="$ROOT/torch-$v"
    if [ -f "$dir/.compat-ok" ]; then
        echo "== torch $v: $dir ready"
        continue
    fi
    echo "== torch $v: building $dir ($(date -u +%H:%M:%S))"
    rm -rf "$dir"
    "$PYTHON" -m venv "$dir"
    pip=("$dir/bin/python" -m pip install --quiet --no-input)
    "${pip[@]}" --no-deps "torch==$v"
    mapfile -t deps < <(torch_runtime_deps "$dir")
    # torch's own requirements (not torch itself: naming it would pull triton back in) with theirs
    "${pip[@]}" "$(numpy_for "$v")" "${deps[@]}"
    "${pip[@]}" "$(transformers_for "$v")" "$(numpy_for "$v")" \
        click tabulate networkx pytest hypothesis pytest-timeout
    "$dir/bin/python" -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
    touch "$dir/.compat-ok"
    du -sh "$dir"
done
