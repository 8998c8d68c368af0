"""POPE's raw files, each pinned at one upstream commit (merged into
:data:`halluscope.data.sources.SOURCES`; read from ``../shared/data`` or downloaded and checked)."""

from __future__ import annotations

from halluscope.data.source import Source, github_sources_of

# repo@commit of each upstream (the provenance table of ../shared/data/README.md)
_POPE = "RUCAIBox/POPE@3df3ba1b110ecce25696989577fad583b67d4239"
_POPE_COOCCUR = "RUCAIBox/POPE@53693d84c9235ce801291b813d309de807378a72"
_POPE_GTOBJ = "RUCAIBox/POPE@552c2811f7b35be991744c5e097c6330e526e076"

#: Licence of each upstream as stated by the shared data README (``None``: no licence file).
_LICENSES: dict[str, str | None] = {
    _POPE: "MIT",
    _POPE_COOCCUR: "MIT",
    _POPE_GTOBJ: "MIT",
}

_gh = github_sources_of(_LICENSES)


SOURCES: tuple[Source, ...] = (
    _gh(
        "pope/captions/Instruction1_instructblip.json",
        _POPE,
        "caption_data/Instruction1_instructblip.json",
        336036,
        "19fb17334c33cf560dd76737936ccc86",
        "f52e9eb65dd8c3a699575d7c425a86942a0c1cbb0847fc68dc4570534c9558e0",
    ),
    _gh(
        "pope/captions/Instruction1_llava.json",
        _POPE,
        "caption_data/Instruction1_llava.json",
        1539438,
        "966b54fb0dd87def1b70a273a1c1ce99",
        "ff5cc9646764018cc7a3824db2e6ccb04dcba5af1fc3957e8127d899b44d7f2d",
    ),
    _gh(
        "pope/captions/Instruction1_minigpt-4.json",
        _POPE,
        "caption_data/Instruction1_minigpt-4.json",
        1490472,
        "03c6a455c25d19f1fce232b9d36ff75f",
        "b5ffa85650b527ded146795f11045a32f5bd6e0b825c21bc3c6e29d7314e0ef2",
    ),
    _gh(
        "pope/captions/Instruction1_mmgpt.json",
        _POPE,
        "caption_data/Instruction1_mmgpt.json",
        760803,
        "493d9a06ff34bd2ac5e2048fefa1287e",
        "90135a7a8f0e24655f37fdf5d6ae7a9ccc485c23ec84cb679c09f3757a4b4e97",
    ),
    _gh(
        "pope/captions/Instruction1_mplug.json",
        _POPE,
        "caption_data/Instruction1_mplug.json",
        1738973,
        "509025bdc754273a973a559eaa0958f2",
        "c694636c3b2d20cf8ad1f0a07b6dcaefa9e388f9db092bbe05468090cba54aad",
    ),
    _gh(
        "pope/captions/Instruction2_instructblip.json",
        _POPE,
        "caption_data/Instruction2_instructblip.json",
        328088,
        "7a0fd446bb07504153ee31d370d523fb",
        "c7095269bf390a4299976cb97b84cebe92efdbc15a3f205127f33b801ef61cac",
    ),
    _gh(
        "pope/captions/Instruction2_llava.json",
        _POPE,
        "caption_data/Instruction2_llava.json",
        1140372,
        "558c4849847597c686e98c00de41e5db",
        "5f84bf9bfcf2a20b1e1ad0ec500419f3a0d4e551d2316f5b9d810e78ddc0fa0e",
    ),
    _gh(
        "pope/captions/Instruction2_minigpt-4.json",
        _POPE,
        "caption_data/Instruction2_minigpt-4.json",
        465666,
        "07e57a49d684ce92defebdcf875f379d",
        "a8ff411eb9c4bbfe28399d929a3fd919dbe1adddf7454262bc995ae47f9d1a75",
    ),
    _gh(
        "pope/captions/Instruction2_mmgpt.json",
        _POPE,
        "caption_data/Instruction2_mmgpt.json",
        664560,
        "916e543f66bc67705edeabd926a94fd7",
        "21a9d5d24b9f761387609c975e57ae6b58ff10f016c9aa347395fd3cb2a213e4",
    ),
    _gh(
        "pope/captions/Instruction2_mplug.json",
        _POPE,
        "caption_data/Instruction2_mplug.json",
        997737,
        "43c0ea3574204bdd228f3768f0d37a5e",
        "3027dda3da9f33db620b3096c7099ae6393ce9a5a288aa2fd8defb29ba18946f",
    ),
    _gh(
        "pope/questions/coco_pope_adversarial.json",
        _POPE,
        "output/coco/coco_pope_adversarial.json",
        370401,
        "3b1a278f8d61acd21b27020d0af817cb",
        "420b3407db1fa9f1187a805dca41cb7b97fd91504e6c2179706188c107fb8ef8",
    ),
    _gh(
        "pope/questions/coco_pope_popular.json",
        _POPE,
        "output/coco/coco_pope_popular.json",
        370190,
        "64902313fb995e09fa478de9741910d7",
        "72c1a8ad45d0c13514f5f22598261df41d3b533854d29682e924db50ed8aa753",
    ),
    _gh(
        "pope/questions/coco_pope_random.json",
        _POPE,
        "output/coco/coco_pope_random.json",
        368166,
        "dc9b6c41ad832c48da758cfa85b37d2c",
        "ac25245170b975a5bdf9080b23fd431dfe6be458bc038259c1f4f09a6bef7994",
    ),
    _gh(
        "pope/stats/coco_co_occur.json",
        _POPE_COOCCUR,
        "output/coco/coco_co_occur.json",
        20060,
        "4370de290f4c99ebd44744d189ec9da5",
        "bc486dd9a59aacc2712689b3218c7c5823cf198d695c9daa1a2cb37e2e67274d",
    ),
    _gh(
        "pope/stats/coco_ground_truth_objects.json",
        _POPE_GTOBJ,
        "output/coco/coco_ground_truth_objects.json",
        1144,
        "10f6d5cd4ed0a7e2aff3c9d003c12808",
        "1eb69b8ebaf767dd214ac7b4d868af4aff65770ed126ed37f91e89665f00a38e",
    ),
)
