"""Entry point of ``python -m tensorlib.bench`` and of the ``tensorlib-bench`` script."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
