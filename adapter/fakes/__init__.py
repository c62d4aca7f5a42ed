"""Stand-ins for the platforms we cannot reach from a test: the fake NTPU and Tenhou servers
and the local Botzone judge. Each puts the built-in table (adapter/local) behind a platform's
real protocol and is meant as a measuring instrument: it behaves as the real platform does."""
