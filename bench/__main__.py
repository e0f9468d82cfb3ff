"""``python -m bench ...`` (from the repository root): same options as ``s2g bench``."""
import sys

from .harness import main

sys.exit(main())
