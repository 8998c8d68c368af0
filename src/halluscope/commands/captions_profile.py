"""``halluscope captions-profile``: a profile that scores captions one already has.

Why a command: scoring one's own MSCOCO captions needs a profile (an overlay of ``params.yaml``)
with the captions as a ``replay`` model, the MSCOCO ground truth, no images and no oracle. Writing
it by hand means knowing the replay spec, the dataset names and which benchmarks to switch off;
this command writes it from the caption files, after checking them, so that the researcher's
three commands are: write the profile, build its tables, read them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from halluscope.io import InputError

PAPER_MODELS = {
    "instructblip": "instructblip",
    "llava": "llava",
    "mplug-owl": "mplug",
    "minigpt-4": "minigpt-4",
    "multimodal-gpt": "mmgpt",
}
"""The CAOS paper's five LVLMs and the names of their caption files (``pope/captions/``)."""
PAPER_INSTRUCTIONS = {"i01": "Instruction1", "i02": "Instruction2"}
"""The instructions the paper's caption files answer."""
PAPER_IMAGES = "pope/captions/Instruction1_llava.json"
"""The 2,000 MSCOCO val2014 images of those files."""

EPILOG = """\
caption file: JSONL (or a JSON array), one record per image:
  {"image_id": 139, "caption": "A living room with a couch and a TV."}
  ("text" is read when there is no "caption"; "instruction_id" lets one file hold several
  instructions). The image ids are MSCOCO 2014 ids; the ground truth is CHAIR's MSCOCO export.

examples:
  halluscope captions-profile my-lvlm --captions my_captions.jsonl
  halluscope captions-profile my-lvlm --captions i01=brief.jsonl --captions i02=short.jsonl \\
      --beside-paper-models
then:
  snakemake --cores 2 --configfile config/profiles/my-lvlm.yaml -- results/tables/
"""


def add_parser(sub) -> None:
    parser = sub.add_parser(
        "captions-profile",
        help="write a profile that scores your own MSCOCO captions (CHAIR, CAOS, ...)",
        description="Write config/profiles/<profile>.yaml: your captions of MSCOCO val2014 "
        "images as a replay model, scored by the caption metrics (CHAIR_S/I, precision, recall, "
        "objects per caption, CAOS with bounds for unverified out-of-domain objects) with no "
        "GPU and no model. Build it with snakemake --configfile.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("name", help="your model's name in the tables (letters, digits, ._-)")
    parser.add_argument(
        "--captions",
        action="append",
        required=True,
        metavar="[INSTRUCTION=]FILE",
        help="a caption file; INSTRUCTION is its instruction id in params.yaml (default i01, "
        "or the records' own instruction_id); repeat for one file per instruction",
    )
    parser.add_argument(
        "--beside-paper-models",
        action="store_true",
        help="also score the CAOS paper's five LVLMs on the same images (i01/i02 only; needs "
        "their caption files in the data mirror or a download)",
    )
    parser.add_argument("--profile", help="the profile's name (default: NAME)")
    parser.add_argument("--limit", type=int, help="score only the first N images")
    parser.add_argument(
        "--out", type=Path, help="the profile file (default config/profiles/<profile>.yaml)"
    )
    parser.set_defaults(func=run)


def caption_files(
    values: list[str], instructions: dict[str, str]
) -> tuple[dict[str, Path], dict[Path, list[str]]]:
    """``{instruction id: file}`` from ``[INSTRUCTION=]FILE`` values, each file checked, and
    each file's image ids (read once here, for the checks that follow)."""
    from halluscope.models.replay import ReplayBackend

    out: dict[str, Path] = {}
    images: dict[Path, list[str]] = {}
    for value in values:
        given, _, file = value.rpartition("=") if "=" in value else ("", "", value)
        path = Path(file)
        backend = ReplayBackend(path, name=path.stem)  # every record checked: file:line errors
        ids = [given] if given else (backend.instruction_ids or ["i01"])
        for instruction in ids:
            if instruction not in instructions:
                raise InputError(
                    f"--captions {value}: unknown instruction {instruction!r}; params.yaml "
                    f"has {', '.join(instructions)}"
                )
            if instruction in out:
                raise InputError(
                    f"--captions {value}: instruction {instruction} already has {out[instruction]}"
                )
            out[instruction] = path
        images[path] = backend.image_ids
    check_same_images(images)
    return out, images


def check_same_images(images: dict[Path, list[str]]) -> None:
    """Every caption file covers the same images: the profile's image list is one file's, so
    captions of an image missing from it would be dropped without a word (and an image with
    no caption in another file would fail that file's job). Same set, any order."""
    first, *others = images.items()
    for path, ids in others:
        missing = sorted(set(first[1]) - set(ids), key=str)
        extra = sorted(set(ids) - set(first[1]), key=str)
        if missing or extra:
            said = []
            if extra:
                said.append(f"{len(extra)} image ids not in {first[0]} (first: {extra[0]})")
            if missing:
                said.append(f"no caption for {len(missing)} of its images (first: {missing[0]})")
            raise InputError(
                f"{path}: {'; '.join(said)}; every caption file must caption the same images "
                "(the profile scores the images of the first file)"
            )


def image_ids(path: Path) -> list[str]:
    from halluscope.io import read_json_records

    return list(dict.fromkeys(str(r["image_id"]) for r in read_json_records(path)))


def check_paper_images(files: dict[str, Path]) -> None:
    """The paper's models only have captions of their 2,000 images for i01 and i02."""
    from halluscope.data.fetch import resolve

    other = sorted(set(files) - set(PAPER_INSTRUCTIONS))
    if other:
        raise InputError(
            f"--beside-paper-models: the paper's models have captions for i01 and i02 only, "
            f"not {', '.join(other)}"
        )
    paper = set(image_ids(resolve(PAPER_IMAGES)))
    for path in dict.fromkeys(files.values()):
        outside = [i for i in image_ids(path) if i not in paper]
        if outside:
            raise InputError(
                f"{path}: {len(outside)} image ids are not among the paper's 2,000 images "
                f"(first: {outside[0]}); drop --beside-paper-models or those captions"
            )


def benchmark_names() -> set[str]:
    from halluscope.benchmarks import BENCHMARKS

    return {b.name for b in BENCHMARKS}


def project_path(path: Path, root: Path) -> str:
    """``path`` as the profile writes it: relative to the project when inside it."""
    absolute = path.resolve()
    return os.path.relpath(absolute, root) if absolute.is_relative_to(root) else str(absolute)


def profile_text(
    profile: str,
    name: str,
    files: dict[str, str],
    paper_models: bool,
    limit: int | None,
    other_benchmarks: Sequence[str] = (),
) -> str:
    """The profile YAML (JSON scalars, which YAML reads as they are), with a comment on use;
    ``other_benchmarks`` (the benchmarks params.yaml enables, CAOS aside) are switched off:
    captions answer none of their questions."""
    q = json.dumps
    instructions = sorted(files)
    models = [name, *(PAPER_MODELS if paper_models else [])]
    lines = [
        f"# Profile `{profile}`: your captions of MSCOCO val2014 images scored by the caption",
        "# metrics (CHAIR_S/I, precision, recall, objects per caption, CAOS with bounds for",
        "# out-of-domain objects no oracle verified). Written by `halluscope captions-profile`.",
        f"# Run: snakemake --cores 2 --configfile config/profiles/{profile}.yaml "
        "-- results/tables/",
        f"profile: {q(profile)}",
        "",
        "data:",
        "  dataset: pope-captions   # MSCOCO val2014 images named by image_list, CHAIR's GT",
        f"  image_list: {q(files[instructions[0]])}",
        "  gt_variant: pattern",
        f"  limit: {q(limit)}",
        "",
        "models:",
        f"  {q(name)}:",
        "    backend: replay",
        "    paths: {" + ", ".join(f"{i}: {q(files[i])}" for i in instructions) + "}",
    ]
    for model, stem in PAPER_MODELS.items() if paper_models else ():
        paths = ", ".join(
            f"{i}: pope/captions/{PAPER_INSTRUCTIONS[i]}_{stem}.json" for i in instructions
        )
        lines += [f"  {model}:", "    backend: replay", f"    paths: {{{paths}}}"]
    lines += [
        "",
        "generate:",
        f"  models: [{', '.join(q(m) for m in models)}]",
        f"  instructions: [{', '.join(instructions)}]",
        "",
        "extract:",
        "  method: rule+lexicon     # rule+lexicon+llm adds the LLM extractor (slow on CPU)",
        "  # CHAIR's own synonym list, as every published CHAIR number uses (builtin: halluscope's",
        "  # table, which adds synonyms CHAIR lacks and so scores other numbers)",
        "  synonyms: chair/synonyms.txt",
        "",
        "oracle:",
        "  method: none             # no images: out-of-domain objects stay unverified (bounds)",
        "",
        "tables:",
        f"  table1_instructions: [{', '.join(instructions)}]",
        "  published: false",
        "",
    ]
    lines += [f"{b}:\n  enabled: false" for b in other_benchmarks]
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> None:
    from halluscope.config import NAME, load

    root = Path.cwd().resolve()
    if not (root / "params.yaml").is_file():
        raise InputError(f"{root}: run this in the halluscope project folder (no params.yaml)")
    profile = args.profile or args.name
    for what, value in (("model name", args.name), ("--profile", profile)):
        if not NAME.fullmatch(value):
            raise InputError(
                f"{what} {value!r}: use letters, digits, '.', '_' or '-', not starting with '.' "
                "(it names a folder of results/ and config/profiles/<profile>.yaml)"
            )
    if args.beside_paper_models and args.name in PAPER_MODELS:
        raise InputError(f"model name {args.name!r} is one of the paper's models; pick another")
    out = args.out or root / "config" / "profiles" / f"{profile}.yaml"
    if out.exists():
        raise InputError(f"{out}: exists; remove it or give another --profile or --out")
    if args.limit is not None and args.limit < 1:
        raise InputError(f"--limit {args.limit}: expected a positive number of images")
    params = load(root / "params.yaml")
    instructions = params["instructions"]
    files, images = caption_files(args.captions, instructions)
    from halluscope.commands.params import check_ids_have_gt

    check_ids_have_gt(images, "pattern", "--captions")  # each file was read once, above
    if args.beside_paper_models:
        check_paper_images(files)
    text = profile_text(
        profile,
        args.name,
        {i: project_path(p, root) for i, p in files.items()},
        args.beside_paper_models,
        args.limit,
        [name for name in params if name in benchmark_names() and name != "caos"],
    )
    from halluscope.io import atomic_write_text

    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, text)
    relative = project_path(out, root)
    print(f"wrote {relative}; build its tables with", file=sys.stderr)
    print(f"snakemake --cores 2 --configfile {relative} -- results/tables/")
