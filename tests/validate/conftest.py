"""Fixtures for the validate tests (helpers live in validate_helpers.py)."""
import pytest

from validate_helpers import _model_file


@pytest.fixture
def model_file(tmp_path):
    """Write a model file from source text and return its path."""
    return _model_file(tmp_path)
