"""``python -m autograd_kit.locale extract|update|compile|check`` (see the package)."""
import sys

from .catalogs import main

sys.exit(main(sys.argv[1:]))
