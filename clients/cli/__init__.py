"""The command line: the ``cardarena`` dispatcher (:mod:`.dispatch`), the argument types every
command shares (:mod:`.argtypes`, :mod:`.logsource`), one module per command, and the main job.

Kept light on purpose: every command module is imported through this package, and the
dispatcher imports none of them until its command runs.
"""

from .dispatch import main

__all__ = ["main"]
