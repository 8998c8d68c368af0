"""Every user subcommand's ``--help`` gives its input formats, one line per input, and one
example command that the parser accepts (the style of ``halluscope caos --help``)."""

from __future__ import annotations

import re
import shlex

import pytest

from halluscope.cli import build_parser, main

#: subcommand -> the inputs whose format its --help must give (one line each)
INPUTS: dict[str, list[str]] = {
    "caos": ["--objects", "--vectors", "--frequent"],
    "chair": ["--captions", "--gt", "--synonyms"],
    "pope": ["--questions", "--answers"],
    "pope-build": ["--gt"],
    "trihe": ["--judgments"],
    "phd": ["--responses"],
    "nope": ["--answers"],
    "lexdiv": ["--questions"],
    "fetch": ["FILE", "--mirror", "--lock"],
    "coco-gt": ["--instances", "--captions", "--zip", "--synonyms"],
}
#: words one of which a format line names (what the input is)
FORMAT_WORDS = re.compile(r"jsonl|json|\.txt|\.zip|folder|path|comma-separated|word2vec", re.I)


def help_text(command: str, capsys) -> str:
    with pytest.raises(SystemExit) as stop:
        main([command, "--help"])
    assert stop.value.code == 0
    return capsys.readouterr().out


def sections(text: str) -> tuple[list[str], list[str]]:
    """The lines of the 'input formats' block and of the 'example:' block of an epilog."""
    assert "input formats (one line each):" in text, text[-800:]
    assert "\nexample:\n" in text, text[-800:]
    formats = text.split("input formats (one line each):\n", 1)[1].split("\nexample:\n", 1)[0]
    example = text.split("\nexample:\n", 1)[1]
    return formats.strip("\n").splitlines(), example.strip("\n").splitlines()


@pytest.mark.parametrize("command", sorted(INPUTS))
def test_help_gives_one_format_line_per_input_and_an_example(command: str, capsys) -> None:
    formats, _ = sections(help_text(command, capsys))
    for flag in INPUTS[command]:
        lines = [line for line in formats if re.match(rf"^  {re.escape(flag)}\s", line)]
        assert len(lines) == 1, (command, flag, formats)
        line = lines[0]
        assert FORMAT_WORDS.search(line), (command, line)
        # one line: the formatter does not wrap it (RawDescriptionHelpFormatter)
        assert len(line) > 60, (command, line)
    # every block line is a format line of one flag (no wrapped continuation lines)
    for line in formats:
        assert re.match(r"^  (--[\w-]+|FILE|stdout)\s+\S", line), (command, line)


@pytest.mark.parametrize("command", sorted(INPUTS))
def test_help_example_is_a_valid_command(command: str, capsys) -> None:
    """The example parses with the real parser: flags exist, required ones are given."""
    _, example = sections(help_text(command, capsys))
    text = " ".join(line.strip().rstrip("\\").strip() for line in example)
    argv = shlex.split(text)
    assert argv[:2] == ["halluscope", command], argv
    args = build_parser().parse_args(argv[1:])
    assert args.func is not None


def test_trihe_help_names_the_nested_pipeline_format(capsys) -> None:
    formats, example = sections(help_text("trihe", capsys))
    line = next(line for line in formats if line.startswith("  --judgments"))
    assert '"judges": {NAME:' in line and "--judge NAME" in line
    assert "--judge" in " ".join(example)
