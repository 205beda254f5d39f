"""Diagnose OOM logs and decode ACL / CANN / HCCL / CUDA / NCCL error codes.

    from memplan.diagnose import diagnose, decode
    d = diagnose("train.log")                      # a path, "-" for stdin, raw text, or a list of them
    d.primary_category, d.incidents[0].summary
    decode("507015").meaning
"""
from memplan.diagnose._catalog import decode
from memplan.diagnose._diagnose import diagnose
from memplan.diagnose._types import Advice, Category, CodeInfo, Diagnosis, Incident

__all__ = ["diagnose", "decode", "Diagnosis", "Incident", "CodeInfo", "Advice", "Category"]
