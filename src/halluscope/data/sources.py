"""Registry of every raw input file: where it comes from and what its bytes must hash to.

The files the core reads (CHAIR's synonyms and reference outputs, HALC's reference CHAIR and POPE
outputs, the MSCOCO ground truth) are listed here; each benchmark folder lists its own files in
its ``sources.py``, merged into :data:`SOURCES`.

Each entry is keyed by its path relative to the data mirror (``../shared/data`` by default) and
to the download cache; both use the same layout. GitHub files are fetched from
``raw.githubusercontent.com`` at a pinned commit, so the URL can never serve other bytes than
the ones whose size, md5 (as published in the provenance table of the shared data README) and
sha256 (computed from that mirror) are recorded here. A file without a published checksum
(the MSCOCO annotation zip) is *trusted on first use*: :mod:`halluscope.data.fetch` records its
checksums in a lock file the first time it is seen and verifies every later use against it.
"""

from __future__ import annotations

from halluscope.data.source import Source, github_raw_url, github_sources_of

__all__ = ["COCO_ANNOTATIONS_ZIP", "SOURCES", "Source", "github_raw_url"]


# repo@commit of each upstream (the provenance table of ../shared/data/README.md)
_CHAIR = "LisaAnne/Hallucination@6e4d33c4bedf6dfcd24c61bf527f40714717be47"
_HALC_CHAIR = "BillChan226/HALC@9418e5b830dd239af9104564d93204e37cb0806d"
_HALC_POPE = "BillChan226/HALC@89763bf298ae9cee355530cc831204d065a840c5"

#: Licence of each upstream as stated by the shared data README (``None``: no licence file).
_LICENSES: dict[str, str | None] = {
    _CHAIR: "BSD-2-Clause",
    _HALC_CHAIR: "MIT",
    _HALC_POPE: "MIT",
}

_gh = github_sources_of(_LICENSES)


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
