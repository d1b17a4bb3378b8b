"""Imported first by conftest.py: the test session caches bytecode even where the environment
says not to.

Container images often set PYTHONDONTWRITEBYTECODE. Then every xdist worker rewrites every test
module's asserts again and every process a test starts (a launch, a command) compiles the
package again (the CPU it costs: bench/RESULTS.md, "Test suite time").
Unset here, for this process and every process it starts, the caches are written once in the
checkout's `__pycache__` folders (ignored by git) and read from then on.
"""

import os
import sys

sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
