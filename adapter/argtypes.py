"""Argument types for argparse, standard library only: ``mjbot``'s commands use them, and so
does the Botzone upload bundle's own parser, which carries this module and nothing else of the
CLI (one rule for what a limit or a count may be, wherever it is typed)."""

from __future__ import annotations

import argparse
import contextlib
import functools
import math
from collections.abc import Callable
from typing import Any, NoReturn


def float_within(low: float, high: float, words: str, *,
                 above: bool = False) -> Callable[[str], float]:
    """An argparse type for a number from ``low`` (``above``: above it) to ``high``; anything
    else (nan, inf, no number) a one-line usage error, ``WORDS, not 'TEXT'``, ``words``
    saying what it takes."""
    def number(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not ((low < value) if above else (low <= value)) or not value <= high:
            raise argparse.ArgumentTypeError(f"{words}, not {text!r}")
        return value

    return number


# seconds for argparse: above 0 and at most an hour
positive_seconds = float_within(0.0, 3600.0, "seconds above 0 (at most 3600)", above=True)


def port_number(text: str) -> int:
    """A TCP port for argparse: a one-line usage error for anything outside 0..65535."""
    if not (text.isascii() and text.isdigit()) or len(text) > 5 or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"must be 0..65535 (0: a free one), got {text!r}")
    return int(text)


def seat_number(text: str) -> int:
    """A seat for argparse: 0..3, else a one-line usage error (the rules index four seats)."""
    if text not in ("0", "1", "2", "3"):
        raise argparse.ArgumentTypeError(f"a seat is 0, 1, 2 or 3, not {text!r}")
    return int(text)


def at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type for a whole number of at least ``minimum`` (counts of hands, games,
    repeats: zero of them leaves nothing to measure or play)."""
    def whole(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"a whole number of at least {minimum}, not {text!r}")
        return value

    return whole


def add_log_options(parser: argparse.ArgumentParser, log_dir_help: str,
                    no_log_help: str) -> None:
    """``--log-dir DIR`` and ``--no-log``, of which one may be given: with both, the logs the
    user thought went to DIR were never written (``--no-log`` won, silently)."""
    either = parser.add_mutually_exclusive_group()
    either.add_argument("--log-dir", help=log_dir_help)
    either.add_argument("--no-log", action="store_true", help=no_log_help)


class UsageErrors:
    """Where a parser tree's refusals go: argparse's plain lines, or, once ``--log-json`` has
    been read (:class:`LogJsonAction`; a service reads JSON lines, and every other error is
    one then), ``as_json(prog, message, usage)``, which the CLI makes one JSON log line."""

    def __init__(self, as_json: Callable[[str, str, str], None] | None = None,
                 json: bool = False) -> None:
        self.as_json = as_json
        self.json = json


class LogJsonAction(argparse.Action):
    """``--log-json``: stored as ``store_true`` is, and noted, so that a usage error met
    after it (in the command's own options, whose parser reads after this one) is JSON."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, True)
        if isinstance(parser, OneLineParser):
            parser.usage_errors.json = True


def command_path(prog: str) -> str | None:
    """The command a line names its messages by: the parser's ``prog`` without the program's
    name, the whole path of a nested command (``dataset import`` of ``mjbot dataset
    import``; None for ``mjbot`` itself). The one rule for a usage error's line, a refusal of
    the command's own checks and the ``command`` of their JSON log lines, so that the three
    agree."""
    return prog.partition(" ")[2].strip() or None


def command_words(commands: Any, handler: Callable[..., Any]) -> list[str]:
    """The words that run ``handler`` among ``commands`` (a parser's subcommands, searched
    down the nested ones), as :func:`command_path` names that command: what one command that
    runs or names another (``nn iterate``'s phases, their record) writes, so that a command
    renamed where it is registered is renamed there too. LookupError where none runs it."""
    for parser in commands.choices.values():
        if parser.get_default("handler") is handler:
            return (command_path(parser.prog) or "").split()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                with contextlib.suppress(LookupError):
                    return command_words(action, handler)
    raise LookupError(f"no command runs {getattr(handler, '__qualname__', handler)}")


class OneLineParser(argparse.ArgumentParser):
    """A parser whose refusal of one argument's value is one line, as every refusal of the
    commands' own checks is: an invalid choice (``--variant richi``), a value its type refuses
    (``--seat 9``), two options that exclude each other. argparse printed its whole usage
    block first (up to ten lines for the arena) and the line that says what was wrong came
    last; that line already names the option and, for a choice, the values it takes. Where
    the usage is the answer (a missing argument, an unknown option) it is printed as before.
    Under ``--log-json`` (see :class:`UsageErrors`) a refusal is one JSON log line instead.
    Subparsers made by :meth:`add_subparsers` are of this class too, sharing its
    ``usage_errors``."""

    def __init__(self, *args: Any, usage_errors: UsageErrors | None = None,
                 command: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.usage_errors = usage_errors or UsageErrors()
        self.command = command  # a (sub)command's parser, made by add_subparsers
        # the dest of a nargs="*" positional that takes the words given after an option too
        # (argparse gives it only those before the first: `review a --seat 1 b` left "b"
        # an unrecognized argument)
        self.rest: str | None = None

    def add_subparsers(self, **kwargs: Any) -> Any:
        kwargs.setdefault("parser_class", functools.partial(
            type(self), usage_errors=self.usage_errors, command=True))
        return super().add_subparsers(**kwargs)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        """As argparse's, but a command's parser refuses an argument it was given and did not
        take (``mjbot arena --nonsense``) itself, with its own usage and name: argparse handed
        it up to the top parser, which refused it with ``mjbot``'s usage line and, under
        ``--log-json``, ``command: null``, so the user was not told which command's options
        to look at. One given before the command (``mjbot --nonsense arena``) is still
        refused by the parser it was given to, ``mjbot``'s (the command's, it was said
        where it had never been given)."""
        parsed, extra = super().parse_known_args(args, namespace)
        if extra and self.rest is not None:
            words = [e for e in extra if not e.startswith("-")]
            setattr(parsed, self.rest, [*(getattr(parsed, self.rest, None) or []), *words])
            extra = [e for e in extra if e.startswith("-")]
        if extra and self.command:
            self.error(f"unrecognized arguments: {' '.join(extra)}")
        return parsed, extra

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:
        """As argparse's; the result's ``command_path`` is that of the innermost command's
        parser it went through (:func:`command_path`), which every message names."""
        parsed = super().parse_args(args, namespace)
        parsed.command_path = command_path(self.chosen(parsed).prog)
        return parsed

    def chosen(self, parsed: argparse.Namespace) -> argparse.ArgumentParser:
        """The innermost (sub)command's parser that ``parsed`` went through (this one where
        no command was chosen)."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                sub = action.choices.get(str(getattr(parsed, action.dest, "")))
                if sub is not None:
                    return sub.chosen(parsed) if isinstance(sub, OneLineParser) else sub
        return self

    def error(self, message: str) -> NoReturn:
        report = self.usage_errors
        if report.json and report.as_json is not None:
            report.as_json(self.prog, message, self.format_usage().strip())
            self.exit(2)
        if message.startswith("argument "):  # argparse.ArgumentError: names its argument
            self.exit(2, f"{self.prog}: {message}\n")
        super().error(message)
