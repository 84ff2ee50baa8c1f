import sys

from symposium_tui.cli import main

sys.exit(main())
