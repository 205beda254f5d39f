import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.path.join(ROOT, "fixtures", "models")
HF = os.path.join(ROOT, "fixtures", "hf")

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


@pytest.fixture
def model_path():
    def get(name: str) -> str:
        return os.path.join(MODELS, name + ".py")
    return get


@pytest.fixture
def write_model(tmp_path):
    """Write a model file from source text and return its path."""
    def write(src: str, name: str = "model.py") -> str:
        p = tmp_path / name
        p.write_text(src)
        return str(p)
    return write
