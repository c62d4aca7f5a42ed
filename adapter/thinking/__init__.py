"""How a session thinks without blocking its event loop: the thinker, the worker process that
runs a slow policy, that process's side, and the inbox that keeps reading meanwhile."""
