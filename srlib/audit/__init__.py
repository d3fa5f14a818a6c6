"""Leakage audits of models × benchmarks with an empirical null (``srlib audit``)."""

from srlib.audit.models import AuditInputError, AuditModel, open_model
from srlib.audit.run import Audit, AuditSpec, audit, summarise

__all__ = [
    "Audit",
    "AuditInputError",
    "AuditModel",
    "AuditSpec",
    "audit",
    "open_model",
    "summarise",
]
