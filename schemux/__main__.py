import sys

from schemux.cli.main import main

sys.exit(main())
