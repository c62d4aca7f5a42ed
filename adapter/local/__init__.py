"""The built-in local table: a referee for every variant, games, and the duplicate arena."""
