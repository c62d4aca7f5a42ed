"""The built-in local table: a referee for every variant, games, seats, walls and the duplicate
arena. The fake platform servers that put it behind a real protocol live in adapter/fakes."""
