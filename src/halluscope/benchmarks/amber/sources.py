"""AMBER's raw files, pinned at one upstream commit (merged into
:data:`halluscope.data.sources.SOURCES`; read from ``../shared/data`` or downloaded and checked)."""

from __future__ import annotations

from halluscope.data.source import Source, github_source

_UPSTREAM = "junyangwang0410/AMBER@534babf6bbfcce2e735c26289dedfb21cef3c939"
_LICENSE = "Apache-2.0"

SOURCES: tuple[Source, ...] = (
    github_source(
        "amber/annotations.json",
        _UPSTREAM,
        "data/annotations.json",
        1813301,
        "e5c5a3f03fd2fc4683ab6e60144ef1c1",
        "db22a436c4836fbb295e60b4e80d519573077579fb7032f01b193c1bd022b797",
        _LICENSE,
    ),
    github_source(
        "amber/metrics.txt",
        _UPSTREAM,
        "data/metrics.txt",
        899,
        "65eb74c07d180ff6400bb5214ef464a3",
        "2fbe2ee584d10e7ce0a568a4902d3d2296727d45f761bf091dd35c4e4b5bc6ac",
        _LICENSE,
    ),
    github_source(
        "amber/query/query_all.json",
        _UPSTREAM,
        "data/query/query_all.json",
        1844750,
        "0735f646adc3eb49565f8cc0e8a1083b",
        "127680ae61f7d4a92d2f7f07a8deaec07f0689b194d2c7c0f41ead7bd2c5bcf5",
        _LICENSE,
    ),
    github_source(
        "amber/query/query_discriminative-attribute.json",
        _UPSTREAM,
        "data/query/query_discriminative-attribute.json",
        922022,
        "84847fe458c593a9d5395724224694fc",
        "35c0fe71290789c5eb198e9a3f5732533bcb35f1d963b57539aab5d1b41dd827",
        _LICENSE,
    ),
    github_source(
        "amber/query/query_discriminative-existence.json",
        _UPSTREAM,
        "data/query/query_discriminative-existence.json",
        583367,
        "c66990cd04f4598370163703c4df0b70",
        "657cce3b3ccd02303998d7d27d1ce06bd210a7a55aa6c888b1b86d5a9dfd9849",
        _LICENSE,
    ),
    github_source(
        "amber/query/query_discriminative-relation.json",
        _UPSTREAM,
        "data/query/query_discriminative-relation.json",
        233144,
        "0c58161d72e88c143c62879c7d00c65e",
        "36e08860653a1562acb657c250604c3d4e26f8a5f99a376fd53c67f9242be20f",
        _LICENSE,
    ),
    github_source(
        "amber/query/query_discriminative.json",
        _UPSTREAM,
        "data/query/query_discriminative.json",
        1738529,
        "6736c49ff6438e1092a3a4068fdc3f94",
        "1502887ac020f4bb7ea564af4e37bddcb030d61b78490d00f9da492a2307abb8",
        _LICENSE,
    ),
    github_source(
        "amber/query/query_generative.json",
        _UPSTREAM,
        "data/query/query_generative.json",
        106220,
        "3d90d35f04b72a44ad66967d7050e549",
        "b7e4c36596126ee36d2c3922638b7fa98743c26efda78fea2315f4425258d087",
        _LICENSE,
    ),
    github_source(
        "amber/relation.json",
        _UPSTREAM,
        "data/relation.json",
        12699,
        "e01a3437ae54a1f6e0502c513e113cb9",
        "c4c1491e9bbc3209abc1888c12a1bf8413bdbab8a0d8be04b990a2e7680cf23e",
        _LICENSE,
    ),
    github_source(
        "amber/safe_words.txt",
        _UPSTREAM,
        "data/safe_words.txt",
        57,
        "045f715e6600220aa250f8955be27662",
        "f92cf1123f4578a2630832fac3e6ac4de36212ea55859d3bed4fd233723f4043",
        _LICENSE,
    ),
)
