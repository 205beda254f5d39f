"""Data files of memplan.diagnose: error-code catalogs (TSV, one source per row) and advice (JSON)."""
