import sys

from schemux.cli import main

sys.exit(main())
