"""Every `mjbot ...` command line in README.md (and the model cards and deploy notes, which
give the commands behind their figures) still parses against today's CLI.

The README shows commands in code blocks (some as usage synopses with ``[optional]`` parts and
``a|b`` alternatives) and inline; a renamed option leaves a command that no longer runs, which
nobody notices until a reader pastes it. Each line is handed to the real parser of
adapter/cli.py (and for `mjbot bench NAME` to the bench's own parser) with ``parse_args``;
nothing is executed. Placeholders (FILE, DIR, N, ...) become values the parser accepts.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from adapter.cli import build_parser
from adapter.commands.bench import BENCHES, bench_parser

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = [README, ROOT / "brain/data/nn_models.md", ROOT / "brain/data/opponent_models.md",
        *sorted((ROOT / "deploy").glob("*.md")), ROOT / "replay/dataset/README.md"]

# Placeholder -> value, by the option it follows first, then by its own name.
BY_OPTION = {"bench": "shanten", "--port": "0", "--policy": "rulebased", "--variant": "riichi",
             "--predictor": "rulebased", "--seat": "1", "--status": "127.0.0.1:0",
             "--server": "127.0.0.1:1", "--ray": "local", "--policies": "rulebased,greedy",
             "--round-wind": "S", "--seat-wind": "S"}  # S: a wind there, no number
BY_NAME = {"N": "2", "K": "2", "S": "1", "H": "8", "R": "10", "P": "2", "V": "riichi",
           "NAME": "rulebased", "FILE": "out.json", "F": "out.json", "DIR": "outdir",
           "HOST:PORT": "127.0.0.1:1", "OPTS": "playouts=1", "A,B,C,D": "rulebased,greedy",
           "LOG": "game.mjlog.msgpack", "GAME": "game.json", "PATH": "games",
           "CONFIG": "mjbot.toml", "LOG_OR_DIR": "logs"}
ENV = re.compile(r"^[A-Z_][A-Z0-9_]*=")
SHELL_STOP = {"|", "||", "&&", ";", "<", ">", ">>", "2>", "2>&1", "&"}


def readme_commands(text: str) -> list[tuple[int, str, bool]]:
    """(README line, command, inline) for every `mjbot` command in a code block or inline code
    span."""
    found: list[tuple[int, str, bool]] = []
    lines = text.splitlines()
    in_block, lang = False, ""
    outside: list[str] = []
    current: list[str] | None = None
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            in_block, lang = not in_block, line[3:].strip()
            outside.append("")
            current = None
            continue
        if not in_block:
            outside.append(line)
            continue
        outside.append("")
        if lang:  # ```toml and the like: no shell commands
            continue
        body = _strip_comment(line)
        if current is not None and (body.startswith((" ", "\t")) and body.strip()):
            current.append(body.strip())  # a continuation (after "\" or an indented "[...]")
        else:
            current = None
            start = _command_start(body.strip())
            if start is not None:
                current = [start]
                found.append((number, "", False))
        if current is not None:
            joined = " ".join(part.rstrip("\\").strip() for part in current)
            found[-1] = (found[-1][0], joined, False)
            if not body.rstrip().endswith("\\") and not _continues(lines, number):
                current = None
    prose = "\n".join(outside)
    for match in re.finditer(r"`([^`]+)`", prose):
        span = " ".join(match.group(1).split())
        start = _command_start(span)
        if start is not None:
            found.append((prose.count("\n", 0, match.start()) + 1, start, True))
    return found


def _continues(lines: list[str], number: int) -> bool:
    """A synopsis goes on when the next line is indented and opens with an option."""
    following = lines[number] if number < len(lines) else ""
    return bool(re.match(r"^\s+[\[-]", following))


def _strip_comment(line: str) -> str:
    return re.split(r"\s#\s", line, maxsplit=1)[0].rstrip()


def _command_start(text: str) -> str | None:
    words = text.split()
    while words and ENV.match(words[0]):
        words.pop(0)
    if len(words) >= 2 and words[0] == "mjbot":
        return " ".join(words)
    return None


def variants(command: str) -> list[list[str]]:
    """The argument lists a synopsis stands for: every ``[optional]`` part taken, and one list
    per branch of its ``a|b`` / ``--x | --y`` alternatives (branch k everywhere), so that each
    option shown is parsed at least once and exclusive options never together."""
    spaced = re.sub(r"([\[\]])", r" \1 ", command)
    words = [w for w in shlex.split(spaced) if w not in ("[", "]")]
    while words and ENV.match(words[0]):
        words.pop(0)
    words = words[1:]  # "mjbot"
    # A bare "|" before an option is an alternative; before anything else, a shell pipe.
    cut = next((i for i, w in enumerate(words) if w in SHELL_STOP
                and not (w == "|" and i + 1 < len(words) and words[i + 1].startswith("-"))),
               len(words))
    words = words[:cut]
    units: list[list[str]] = []  # an option with its values, or a positional
    joined = False
    for w in words:
        if w == "|":
            joined = True
            continue
        if not units or w.startswith("-") or not units[-1][0].startswith("-"):
            units.append([w])
        else:
            units[-1].append(w)
        if joined and w.startswith("-"):
            units[-2:] = [units[-2] + ["|"] + units[-1]]  # kept as one alternative group
        joined = False
    groups = [_split(unit, "|") for unit in units]
    branches = max([len(g) for g in groups] + [max(len(w.split("|")) for w in words)])
    out = []
    for k in range(branches):
        args: list[str] = []
        for g in groups:
            for w in g[min(k, len(g) - 1)]:
                pieces = w.split("|")
                args.append(pieces[min(k, len(pieces) - 1)])
        out.append(_fill(args))
    return out


def _split(words: list[str], sep: str) -> list[list[str]]:
    parts: list[list[str]] = [[]]
    for w in words:
        if w == sep:
            parts.append([])
        else:
            parts[-1].append(w)
    return parts


def _fill(args: list[str]) -> list[str]:
    filled = []
    for i, w in enumerate(args):
        before = args[i - 1] if i else ""
        if w in BY_NAME or w.rstrip(".") in BY_NAME:
            w = BY_OPTION.get(before) or BY_NAME[w.rstrip(".")]
        elif w.startswith("$"):  # a shell variable of a loop in the text
            w = BY_OPTION.get(before) or "1"
        filled.append(w)
    return filled


def parse_error(args: list[str]) -> str | None:
    """None when the CLI accepts ``args``, else what argparse said."""
    err, out = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            ns = build_parser().parse_args(args)
            if ns.command == "bench" and ns.words:
                known = [ns.words[0]] if ns.words[0] in BENCHES else None
                bench_parser(known).parse_args(ns.words)
    except SystemExit as exc:
        if exc.code not in (0, None):
            return err.getvalue().strip().splitlines()[-1]
    return None


COMMANDS = [(doc.relative_to(ROOT).as_posix(), line, command, inline)
            for doc in DOCS for line, command, inline in readme_commands(doc.read_text("utf-8"))]


def test_the_readme_shows_commands() -> None:
    """The extraction finds the README's commands, in blocks and inline (a broken extractor
    would otherwise pass everything)."""
    shown = [c for doc, _, c, _ in COMMANDS if doc == "README.md"]
    assert len(shown) > 40
    assert any(c.startswith("mjbot arena --variant V") for c in shown)
    assert any(c.startswith("mjbot bench mc --models DIR") for c in shown)  # inline, two lines
    assert any(c.startswith("mjbot selfplay") and "--workers 2" in c for c in shown)


# Inline code often names a command or an option in prose (`mjbot replay`, `mjbot selfplay
# --ray`) rather than a whole line: there only a missing argument is forgiven; an unknown
# command or option, a bad choice or value still fails.
MENTION = re.compile(r"arguments are required|is required|expected one argument")


@pytest.mark.parametrize(("doc", "line", "command", "inline"), COMMANDS,
                         ids=[f"{d}:{n}" for d, n, _, _ in COMMANDS])
def test_readme_command_parses(doc: str, line: int, command: str, inline: bool) -> None:
    for args in variants(command):
        error = parse_error(args)
        if inline and error and MENTION.search(error):
            continue
        assert error is None, f"{doc} line {line}: `{command}` -> {args}: {error}"


def test_a_renamed_option_is_caught() -> None:
    """The check itself fails on an option the CLI does not have, naming the README line."""
    (line, command, _), = readme_commands("text\n\n`mjbot arena --variant riichi --rounds 3`\n")
    assert line == 3
    error = parse_error(variants(command)[0])
    assert error is not None and "unrecognized arguments: --rounds 3" in error
    assert parse_error(["bench", "mc", "--playouts-per-second", "3"]) is not None


WEIGHTS_USED = re.compile(r"(?:--init|--model|MJBOT_NN_WEIGHTS=|nn@)\s*([\w./-]+\.npz)")
WEIGHTS_MADE = re.compile(r"--out\s+([\w./-]+\.npz)")


def test_the_neural_policy_walk_makes_each_weights_file_before_it_uses_it() -> None:
    """The README's training walk, its blocks in order as a user runs them: stage 2 started
    from gen1.npz, which stage 1 never wrote (it wrote over the shipped brain/data/
    nn_riichi.npz, the plain `nn` whose SHA-256 the model card gives). Each weights file a
    command reads is now shipped or written by an earlier command, and none is written into
    brain/data."""
    text = README.read_text("utf-8")
    section = text[text.index("\n## Neural policy"):]
    section = section[:section.index("\n## ", 1)]
    made: set[str] = set()
    for block in re.findall(r"```\n(.*?)```", section, re.S):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            for used in WEIGHTS_USED.findall(line):
                assert used in made or (ROOT / used).is_file(), f"{used}: never made: {line}"
            for out in WEIGHTS_MADE.findall(line):
                assert not out.startswith("brain/data/"), f"writes a shipped file: {line}"
                made.add(out)
    assert {"gen1.npz", "gen2.npz"} <= made


# Where a README command reads a file of the repository (one a user's clone has), and the
# options whose value is a file the command writes, which need not exist yet.
IN_CLONE = ("tests/", "brain/", "adapter/", "replay/", "protocols/", "deploy/", "../shared/")
WRITTEN = {"--out", "-o", "--json", "--log-dir", "--dir", "--keep-sets"}


def clone_paths(command: str) -> list[str]:
    """The repository paths (or globs) ``command`` reads: a word, or a ``nn@``/``NAME=``
    value, under one of the repository's folders or ``../shared``; not a placeholder (an
    upper-case last part: GAME, FILE) nor the value of an option that writes."""
    words = shlex.split(re.sub(r"[\[\]]", " ", command))
    found = []
    for before, word in zip(["", *words], words, strict=False):
        for piece in word.split(","):  # --policies A,B,C,D
            path = re.sub(r"^(?:[\w.-]*=)?(?:nn@)?", "", piece)
            if before in WRITTEN or not path.startswith(IN_CLONE):
                continue
            if re.fullmatch(r"[A-Z_]+", Path(path).name):
                continue
            found.append(path)
    return found


def test_the_readme_commands_read_only_files_a_users_clone_has() -> None:
    """The Neural policy walk's stage 2 imported ``../shared/data/tenhou/...``, the
    developers' folder beside the checkout that a user's clone lacks (mjbot dataset: "No
    such file or directory"); the same records are in tests/data/shared. Every file a README
    command reads from the repository exists in it (a glob matches at least one file)."""
    for doc, line, command, _ in COMMANDS:
        if doc != "README.md":
            continue
        for path in clone_paths(command):
            assert not path.startswith("../shared/"), \
                f"README.md line {line}: `{command}` reads {path}, which a clone lacks"
            assert list(ROOT.glob(path)) if "*" in path else (ROOT / path).exists(), \
                f"README.md line {line}: `{command}` reads {path}, not in the repository"


def test_the_neural_policy_walk_runs_as_pasted() -> None:
    """Its stage 2 ended the import's file list in "...", which mjbot read as one more file
    ("mjbot dataset: ...: No such file or directory"): its commands hold no elision."""
    text = README.read_text("utf-8")
    section = text[text.index("\n## Neural policy"):]
    section = section[:section.index("\n## ", 1)]
    for block in re.findall(r"```\n(.*?)```", section, re.S):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            assert "..." not in _strip_comment(line).split(), line


def test_the_paths_a_command_reads_are_told_from_what_it_writes() -> None:
    assert clone_paths("mjbot dataset import --out data/real ../shared/data/x/*.json ...") \
        == ["../shared/data/x/*.json"]
    assert clone_paths("MJBOT_NN_WEIGHTS=brain/data/a.npz mjbot arena --policies "
                       "rulebased,nn@tests/data/b.npz --out brain/data/c.npz "
                       "tests/data/GAME") == ["brain/data/a.npz", "tests/data/b.npz"]
