import sys

from symposium_tui.start import main

sys.exit(main())
