"""`memplan decode CODE...`: what an ACL / CANN / torch_npu / HCCL / CUDA / NCCL code means and what to do."""
from __future__ import annotations

import click

from memplan.cli._output import EXIT_OK, debug_option, emit, format_option, run_command


@click.command()
@click.argument("codes", nargs=-1, required=True, metavar="CODE...")
@format_option
@debug_option
def command(codes: tuple[str, ...], fmt: str, debug: bool) -> None:
    """Decode error codes: 207001, ACL_ERROR_RT_MEMORY_ALLOCATION, EL0004, ERR00100, HCCL_E_TIMEOUT, ..."""

    def work():
        from memplan import api

        return [api.decode(c) for c in codes]

    infos = run_command(debug, work)
    from memplan.report.diagnosis_text import render_codes

    emit(fmt, "decode", {"codes": [i.to_dict() for i in infos]}, lambda: render_codes(infos), EXIT_OK)
