"""How the server's processes log: JSON lines on stderr, one format for the server and its
gateway process alike."""

from __future__ import annotations

import logging
import sys

import structlog
import structlog.tracebacks


def configure_logging(level: str) -> None:
    """JSON lines on stderr; the match id is bound by whoever logs about a match."""
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            # Tracebacks without their frames' local variables: those hold seat tokens and
            # seeds, which must never reach a log.
            structlog.processors.ExceptionRenderer(
                structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
            ),
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping()[level.upper()]
        ),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
