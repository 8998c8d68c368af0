"""Registry of every raw input file: where it comes from and what its bytes must hash to.

Each entry is keyed by its path relative to the data mirror (``../shared/data`` by default) and
to the download cache; both use the same layout. GitHub files are fetched from
``raw.githubusercontent.com`` at a pinned commit, so the URL can never serve other bytes than
the ones whose size, md5 (as published in the provenance table of the shared data README) and
sha256 (computed from that mirror) are recorded here. A file without a published checksum
(the MSCOCO annotation zip) is *trusted on first use*: :mod:`halluscope.data.fetch` records its
checksums in a lock file the first time it is seen and verifies every later use against it.
"""

from __future__ import annotations

from halluscope.data.source import Source, github_raw_url, github_source

__all__ = ["COCO_ANNOTATIONS_ZIP", "SOURCES", "Source", "github_raw_url"]


# repo@commit of each upstream (the provenance table of ../shared/data/README.md)
_CHAIR = "LisaAnne/Hallucination@6e4d33c4bedf6dfcd24c61bf527f40714717be47"
_HALC_CHAIR = "BillChan226/HALC@9418e5b830dd239af9104564d93204e37cb0806d"
_HALC_POPE = "BillChan226/HALC@89763bf298ae9cee355530cc831204d065a840c5"
_PHD_README = "jiazhen-code/PhD@4cc31db049a70abff2912d5c083ebcc5c384b011"
_PHD = "jiazhen-code/PhD@fffcebb069f6d0058ac43d3e75497906efefae8f"
_POPE = "RUCAIBox/POPE@3df3ba1b110ecce25696989577fad583b67d4239"
_POPE_COOCCUR = "RUCAIBox/POPE@53693d84c9235ce801291b813d309de807378a72"
_POPE_GTOBJ = "RUCAIBox/POPE@552c2811f7b35be991744c5e097c6330e526e076"
_TRIHE = "wujunjie1998/Tri-HE@c84079061f382f8da07f5d51382a93669dbe6b87"

#: Licence of each upstream as stated by the shared data README (``None``: no licence file).
_LICENSES: dict[str, str | None] = {
    _CHAIR: "BSD-2-Clause",
    _HALC_CHAIR: "MIT",
    _HALC_POPE: "MIT",
    _PHD_README: None,
    _PHD: None,
    _POPE: "MIT",
    _POPE_COOCCUR: "MIT",
    _POPE_GTOBJ: "MIT",
    _TRIHE: None,
}


def _gh(rel: str, origin: str, upstream: str, size: int, md5: str, sha256: str) -> Source:
    return github_source(rel, origin, upstream, size, md5, sha256, _LICENSES[origin])


_GITHUB: tuple[Source, ...] = (
    _gh(
        "chair/synonyms.txt",
        _CHAIR,
        "data/synonyms.txt",
        3577,
        "fdf03d16beb2507696d1b881c958904d",
        "b685537b36fe21b791c87151b96a991ceb582edff19f3da204dcc7a7905502f2",
    ),
    _gh(
        "halc/chair/llava-1.5_greedy_beams/llava-1.5_greedy_beams_coco_num_images_500_chair_results.json",
        _HALC_CHAIR,
        "hallucination_results/chair/llava-1.5_greedy_beams/coco/llava-1.5_greedy_beams_coco_num_images_500_chair_results.json",
        2424275,
        "251c9bdb5ae65a89210d988d1d98adbb",
        "a0d2ce3688102183df2596ff596625f9314de3dfc3076d50cb1580be0234aad6",
    ),
    _gh(
        "halc/chair/llava-1.5_greedy_beams/llava-1.5_greedy_beams_coco_num_images_500_chair_results.txt",
        _HALC_CHAIR,
        "hallucination_results/chair/llava-1.5_greedy_beams/coco/llava-1.5_greedy_beams_coco_num_images_500_chair_results.txt",
        55,
        "b283f758e2e575f509d8f649ba9da2bb",
        "4fa6dc3bf27d5d53c9e94632212dc5b38c96b7d4f7f8ba78e725ffc9b252ef25",
    ),
    _gh(
        "halc/chair/minigpt4_greedy_beams/minigpt4_greedy_beams_coco_num_images_500_chair_results.json",
        _HALC_CHAIR,
        "hallucination_results/chair/minigpt4_greedy_beams/coco/minigpt4_greedy_beams_coco_num_images_500_chair_results.json",
        2408362,
        "d8bd1f7a28433c184834d4e2d3df76ff",
        "ba0f61d34330018dd00afa0fcc6dc02a08f3da9634f2729f074deb1812aced7d",
    ),
    _gh(
        "halc/chair/minigpt4_greedy_beams/minigpt4_greedy_beams_coco_num_images_500_chair_results.txt",
        _HALC_CHAIR,
        "hallucination_results/chair/minigpt4_greedy_beams/coco/minigpt4_greedy_beams_coco_num_images_500_chair_results.txt",
        56,
        "ea9850d2f5e215f45756643c1c3e4bcf",
        "8c7cbfbf0c90058e444053582e8f772fb0fbe52413975e66b192fad1b6484cff",
    ),
    _gh(
        "halc/chair/mplug-owl2_greedy_beams/mplug-owl2_greedy_beams_coco_num_images_500_chair_results.json",
        _HALC_CHAIR,
        "hallucination_results/chair/mplug-owl2_greedy_beams/coco/mplug-owl2_greedy_beams_coco_num_images_500_chair_results.json",
        2411146,
        "f5162841a4d053fb78048d4f9c65f39c",
        "c3a332cb3a7a1959a99c00bd26a144478ac4f145f7378c89403963333073bb86",
    ),
    _gh(
        "halc/chair/mplug-owl2_greedy_beams/mplug-owl2_greedy_beams_coco_num_images_500_chair_results.txt",
        _HALC_CHAIR,
        "hallucination_results/chair/mplug-owl2_greedy_beams/coco/mplug-owl2_greedy_beams_coco_num_images_500_chair_results.txt",
        55,
        "6976cd84eae730d51c8cade4e3950b15",
        "d2c0d3a36eae06788bb0038ee10f271b25dd4bde049db7990d646214f68a40b5",
    ),
    _gh(
        "halc/pope/coco_num_images_500_num_samples_3_co_occur.json",
        _HALC_POPE,
        "generated_pope_inputs/coco/coco_num_images_500_num_samples_3_co_occur.json",
        20958,
        "2312c22408548ec690df22a1f9396622",
        "6bb3425237f57b59cd63f42ec02b1cab0f003de372813cddf5d9f56fc749d518",
    ),
    _gh(
        "halc/pope/coco_num_images_500_num_samples_3_ground_truth_objects.json",
        _HALC_POPE,
        "generated_pope_inputs/coco/coco_num_images_500_num_samples_3_ground_truth_objects.json",
        1149,
        "96b9d856ae49b77c6c63bcb4681f886e",
        "881ef63e21b6f2e615f2a529fe715bd48e091eff575c9cfe59bf836a13d81e2e",
    ),
    _gh(
        "halc/pope/coco_num_images_500_num_samples_3_pope_random_questions.json",
        _HALC_POPE,
        "generated_pope_inputs/coco/coco_num_images_500_num_samples_3_pope_random_questions.json",
        368786,
        "547e7bffecade7e6d03c83a12dc72079",
        "150a7d2c1509ef1e1869d10996a07a1c4967dcaedc90a409e1502da84ba05f70",
    ),
    _gh(
        "halc/pope/minigpt4_pretrain-llama2_coco_num_images_500_num_samples_3_generated_pope_random_answers.json",
        _HALC_POPE,
        "generated_pope_inputs/minigpt4_pretrain-llama2/coco/minigpt4_pretrain-llama2_coco_num_images_500_num_samples_3_generated_pope_random_answers.json",
        501919,
        "6b725277c30a30b2d9a701a7bd4796a1",
        "256b103993577946a2cf55daa0e9cc0f0be10d6c4ed27f54186f24cb01d5dbc5",
    ),
    _gh(
        "phd/README.upstream.md",
        _PHD_README,
        "README.md",
        12068,
        "4dc1eb8cd2dc07feca1d18ad98649e1d",
        "fa2360e6f2e135e84bf62bb08f6cc7ef08d55a72f9bb3ab8c91e70d214f1e70b",
    ),
    _gh(
        "phd/data_ccs.json",
        _PHD,
        "data_ccs.json",
        322488,
        "f81ad401b391ad77ef78117966788da0",
        "66e2fded6065bf74e084b3763fc855458d6b2fdea7b04df98b0f7ebf3cc53208",
    ),
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
    _gh(
        "trihe/tri-he.json",
        _TRIHE,
        "data/tri-he.json",
        553050,
        "a89207c21d82014130e92c23f1ee7f7d",
        "9742e23933a1463ad487ab4e557b962b5d453500ef4ceee88a8ace9378b4a82b",
    ),
)

_CHAIR_GT_HOW = (
    "no public download: it was exported from a pickled CHAIR evaluator (pattern: "
    "Maxlinn/CHAIR-metric-standalone@640c507166 chair.pkl; lemmatizer: "
    "BillChan226/HALC@2215a640bc chair.pkl). Copy it from the shared data mirror, or rebuild an "
    "equivalent (not byte-identical) file from the MSCOCO annotations with "
    "`halluscope coco-gt --zip $(halluscope fetch coco/annotations_trainval2014.zip) "
    "--synonyms $(halluscope fetch chair/synonyms.txt) --variant {variant} --out FILE`"
)

_DERIVED: tuple[Source, ...] = (
    Source(
        path="coco/chair_gt_objects_lemmatizer.json",
        url=None,
        size=5033296,
        md5="90948b5726cfb238f3c55c1b740714d9",
        sha256="2d3381ed3f45c1289e79cd6fe370822590175f7107c0710c97bd0f48428edfaf",
        origin="derived from BillChan226/HALC@2215a640bc:chair.pkl (restricted unpickling)",
        license="MIT",
        how=_CHAIR_GT_HOW.format(variant="lemmatizer"),
    ),
    Source(
        path="coco/chair_gt_objects_pattern.json",
        url=None,
        size=5023195,
        md5="c01ee454bdc77c141ed6a212f08a2e46",
        sha256="4bb04b8bfda2e1f809ded8c0d0eb55ba6609f58cf9a71d33108f60177b7c7bcc",
        origin="derived from Maxlinn/CHAIR-metric-standalone@640c507166:chair.pkl "
        "(restricted unpickling)",
        license=None,
        how=_CHAIR_GT_HOW.format(variant="pattern"),
    ),
)

#: MSCOCO 2014 train+val annotations (instances, captions, person keypoints). The COCO site
#: publishes no checksum, so this one is trust-on-first-use (see :mod:`halluscope.data.fetch`).
COCO_ANNOTATIONS_ZIP = Source(
    path="coco/annotations_trainval2014.zip",
    url="http://images.cocodataset.org/annotations/annotations_trainval2014.zip",
    size=None,
    md5=None,
    sha256=None,
    origin="cocodataset.org: annotations_trainval2014.zip",
    license="CC-BY-4.0 (COCO annotations)",
)


def _benchmark_sources() -> tuple[Source, ...]:
    """The files each benchmark folder declares (``halluscope.benchmarks.<name>.sources``)."""
    from halluscope.benchmarks import import_plugins

    return tuple(s for module in import_plugins("sources") for s in module.SOURCES)


#: Every registered raw input, keyed by its path relative to the mirror and the cache.
SOURCES: dict[str, Source] = {
    s.path: s
    for s in sorted(
        (*_GITHUB, *_DERIVED, COCO_ANNOTATIONS_ZIP, *_benchmark_sources()), key=lambda s: s.path
    )
}
