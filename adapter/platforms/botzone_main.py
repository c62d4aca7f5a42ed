"""``python -m adapter.platforms.botzone_main``: the Botzone bot without the rest of the CLI
(what the upload bundle runs), for timing one-shot turns the way Botzone starts them."""

import sys

from adapter.platforms.botzone import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
