"""Makes ``factories`` (RunRecords built in tests) importable by the compare and lens tests."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
