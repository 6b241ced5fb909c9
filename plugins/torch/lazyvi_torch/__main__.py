"""python -m lazyvi_torch: the plugin process, as the lazyvi-torch command
runs it."""

import sys

from .server import main

if __name__ == "__main__":
    sys.exit(main())
