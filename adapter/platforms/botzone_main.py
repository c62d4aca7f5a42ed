"""``python -m adapter.platforms.botzone_main``: the Botzone bot without the rest of the CLI
(what the upload bundle runs), for timing one-shot turns the way Botzone starts them."""

import sys

from adapter.platforms.botzone_options import one_blas_thread

if __name__ == "__main__":
    one_blas_thread()  # before the bot's imports bring numpy in
    from adapter.platforms.botzone import main

    sys.exit(main(sys.argv[1:]))
