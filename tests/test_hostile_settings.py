"""A settings file is untrusted input: it never runs code, never leaks a secret, never writes
outside its profile, and is never read two ways (issue 48, items 1-5).

The shell walk formats every rule's real shell line (read from the parsed workflow through
Snakemake's API) with a command substitution in every placeholder, runs it with ``bash``, and
checks that nothing ran. The other tests give hostile settings files to ``halluscope
check-params`` and to ``snakemake -n`` and check the refusal and what was written.
"""

from __future__ import annotations

import os
import shutil
import string
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def hostile(marker: Path) -> str:
    """A value that runs ``touch marker`` wherever a shell line uses it unquoted."""
    return f"a$(touch {marker})b;touch {marker};`touch {marker}`"


@pytest.fixture(scope="module")
def shell_rules() -> dict[str, str]:
    """``{rule: shell template}`` of every shell rule of the parsed workflow."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import OutputSettings, ResourceSettings

    cwd = Path.cwd()
    try:
        with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
            workflow = api.workflow(
                resource_settings=ResourceSettings(), snakefile=ROOT / "Snakefile", workdir=ROOT
            )
            rules = {r.name: r.shellcmd for r in workflow._workflow.rules if r.shellcmd}
    finally:
        os.chdir(cwd)
    return rules


def test_every_shell_rule_is_walked(shell_rules: dict[str, str]) -> None:
    assert len(shell_rules) >= 40  # 44 at the time of writing: the walk covers them all
    assert {"llm_comparison", "score", "figure", "data_items"} <= set(shell_rules)


def test_no_placeholder_of_a_shell_line_runs_its_value(
    shell_rules: dict[str, str], tmp_path: Path
) -> None:
    """Each placeholder (``{input.x}``, ``{params.y}``, ``{wildcards.z}``, ``{log}``, ...) holds
    a command substitution; the formatted line runs in bash with a ``halluscope`` that only
    exits (the stage itself is not under test); no marker file may appear."""
    from snakemake.iocontainers import Namedlist
    from snakemake.utils import format as snakemake_format

    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "halluscope").write_text("#!/bin/sh\nexit 0\n")
    (fake / "halluscope").chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"}
    for rule, template in sorted(shell_rules.items()):
        marker = tmp_path / f"ran-{rule}"
        value = hostile(marker)
        names: dict[str, set[str]] = {}
        for _, field, _, _ in string.Formatter().parse(template):
            if field:
                head, _, attr = field.partition(".")
                names.setdefault(head, set()).update([attr] if attr else [])
        namespace = {}
        for head, attrs in names.items():
            if head == "threads":
                namespace[head] = 2  # an int from Snakemake, never a setting
                continue
            listed = Namedlist(fromdict={a: value for a in sorted(attrs)}) if attrs else None
            namespace[head] = listed if listed is not None else Namedlist([value, value])
        line = snakemake_format(template, **namespace)
        work = tmp_path / rule
        work.mkdir()
        subprocess.run(["bash", "-c", line], cwd=work, env=env, capture_output=True, timeout=30)
        assert not marker.exists(), f"rule {rule}: a placeholder's value ran: {template!r}"


@pytest.mark.parametrize(
    "overlay, key",
    [
        ("tables: {compare_with: 'a$(touch PWNED)b'}", "tables.compare_with"),
        ('profile: ".."', "profile"),
        ("profile: ../../x", "profile"),
        ("models: {'../x': {backend: sim, preset: sim-precise}}", "models"),
        ("generate: {instructions: ['../i01']}", "generate.instructions.0"),
        ("embed: {embedders: ['a;b']}", "embed.embedders.0"),
    ],
)
def test_a_name_setting_must_be_a_plain_name(tmp_path: Path, overlay: str, key: str) -> None:
    """Profile, model, instruction and embedder names become path components and shell words:
    ``[A-Za-z0-9_][A-Za-z0-9_.-]*`` only (no separator, never ``..``)."""
    from halluscope.config import ConfigError, load_with_overlays

    path = tmp_path / "overlay.yaml"
    path.write_text(overlay + "\n")
    with pytest.raises(ConfigError) as err:
        load_with_overlays(ROOT / "params.yaml", [path])
    assert key.split(".")[0] in str(err.value)
    assert not (tmp_path / "PWNED").exists()


# made at run time, so that no committed line looks like a real credential
FAKE_KEY = "sk-" + "x" * 28
FAKE_TOKEN = "ghp_" + "0" * 28
FAKE_PASSWORD = "pw-" + "y" * 12
SECRETS = [
    (
        "models: {gpt: {backend: openai, model: m, base_url: 'https://api.x.invalid/v1', "
        f"api_key: {FAKE_KEY}}}}}",
        "models.gpt.api_key",
        FAKE_KEY,
    ),
    (
        "models: {gpt: {backend: openai, model: m, "
        f"base_url: 'https://me:{FAKE_PASSWORD}@api.x.invalid/v1'}}}}",
        "models.gpt.base_url",
        FAKE_PASSWORD,
    ),
    (
        "models: {gpt: {backend: openai, model: m, base_url: 'https://api.x.invalid/v1', "
        f"token: {FAKE_TOKEN}}}}}",
        "models.gpt.token",
        FAKE_TOKEN,
    ),
]


@pytest.mark.parametrize("overlay, key, secret", SECRETS)
def test_check_params_refuses_a_secret_naming_the_key_not_the_value(
    tmp_path: Path, overlay: str, key: str, secret: str
) -> None:
    path = tmp_path / "overlay.yaml"
    path.write_text(overlay + "\n")
    proc = subprocess.run(
        [str(BIN / "halluscope"), "check-params", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert key in proc.stderr and "credential" in proc.stderr
    assert secret not in proc.stderr + proc.stdout


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's tracked files in a fresh folder (no .snakemake/, logs/ or results/)."""
    root = tmp_path_factory.mktemp("hostile") / "halluscope"
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, files):
        source = ROOT / name.decode()
        if source.is_file():
            target = root / name.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return root


def snakemake_dry_run(root: Path, overlay: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"}
    return subprocess.run(
        [str(BIN / "snakemake"), "-n", "--cores", "1", "--configfile", str(overlay)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("overlay, key, secret", SECRETS)
def test_snakemake_refuses_a_secret_before_writing_it_anywhere(
    clone: Path, tmp_path: Path, overlay: str, key: str, secret: str
) -> None:
    path = tmp_path / "overlay.yaml"
    path.write_text(overlay + "\ngenerate: {models: [gpt]}\n")
    proc = snakemake_dry_run(clone, path)
    assert proc.returncode != 0 and key in proc.stdout + proc.stderr
    assert secret not in proc.stdout + proc.stderr
    for folder in (".snakemake", "logs", "results"):
        for file in (clone / folder).rglob("*") if (clone / folder).exists() else ():
            if file.is_file():
                assert secret.encode() not in file.read_bytes(), file


BOMB = "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9) if prev else ', '.join(['lol'] * 9)}]\n"
    for prev, name in zip(["", *"abcdefgh"], "abcdefghi", strict=True)
)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("caos:\n  k: 3\n  k: 7\n", ":3:3: duplicate key 'k' (first at line 2)"),
        (BOMB, "aliases expand to more than"),
        ("__use_yte__: true\nprofile: x\n", "YTE template"),
    ],
)
def test_yaml_that_would_hang_or_be_read_two_ways_is_refused(
    clone: Path, tmp_path: Path, text: str, expected: str
) -> None:
    """``check-params`` and the Snakefile's parse refuse it at once with file and line: the two
    engines never read one file two ways (DVC refuses a duplicate key, PyYAML keeps the last)."""
    path = tmp_path / "overlay.yaml"
    path.write_text(text)
    proc = subprocess.run(
        [str(BIN / "halluscope"), "check-params", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2 and f"{path}:" in proc.stderr and expected in proc.stderr
    dry = snakemake_dry_run(clone, path)
    assert dry.returncode != 0 and expected in dry.stdout + dry.stderr


def test_a_duplicate_key_in_params_yaml_is_refused(clone: Path, tmp_path: Path) -> None:
    from halluscope.config import ConfigError, read_yaml_mapping

    params = tmp_path / "params.yaml"
    params.write_text((ROOT / "params.yaml").read_text() + "profile: other\n")
    with pytest.raises(ConfigError, match=r"duplicate key 'profile'"):
        read_yaml_mapping(params)


def test_captions_profile_refuses_a_profile_name_that_leaves_config_profiles(
    tmp_path: Path,
) -> None:
    captions = tmp_path / "c.jsonl"
    captions.write_text('{"image_id": 139, "caption": "a room"}\n')
    for name in ("../../x", "..", ".hidden", "a/b"):
        proc = subprocess.run(
            [str(BIN / "halluscope"), "captions-profile", "m", "--captions", str(captions)]
            + ["--profile", name],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 2 and "--profile" in proc.stderr, name
    assert not (ROOT.parent / "x.yaml").exists() and not (ROOT / "config" / "x.yaml").exists()
