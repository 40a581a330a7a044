"""The auditor: every check an outsider can make of a match log, with no trust in its server.

:func:`audit_log` runs the checks of :mod:`.checks` in order and reports the first
discrepancy (:mod:`.auditor`); :mod:`.canonical` holds entries to their canonical bytes,
:mod:`.explain` says a replay failure in card codes, :mod:`.report` prints a report and
:func:`audit_response` gives one verdict line per log.
"""

from .auditor import AuditReport, Failure, audit_log
from .checks import CHECKS
from .form import NOT_IN_LOG, seed_commitment
from .report import failure_text, report_json, report_text
from .verdict import audit_response

__all__ = [
    "CHECKS",
    "NOT_IN_LOG",
    "AuditReport",
    "Failure",
    "audit_log",
    "audit_response",
    "failure_text",
    "report_json",
    "report_text",
    "seed_commitment",
]
