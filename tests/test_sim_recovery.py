"""The simulated LVLMs' injected hallucinations are recovered exactly by CHAIR on the demo.

Because the simulator records what it injected, CHAIR over its captions (with halluscope's own
synonym table and GT from the demo annotations) must find exactly the injected MSCOCO objects,
caption by caption; the overall CHAIR_S and CHAIR_I then equal the injected rates.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from halluscope.data.demo import export_items, load_annotations
from halluscope.io import read_jsonl
from halluscope.metrics.chair import chair_scores
from halluscope.models.base import make_backend
from halluscope.models.generate import caption_request
from halluscope.objects.parser import ObjectParser

ROOT = Path(__file__).resolve().parents[1]
PARAMS = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
IN_DOMAIN_KINDS = {"frequent", "cooccur"}


@pytest.fixture(scope="module")
def items(tmp_path_factory) -> list[dict]:
    out = tmp_path_factory.mktemp("items")
    export_items(
        load_annotations(ROOT / "data/demo/annotations.yaml"), out / "images", out / "items.jsonl"
    )
    return read_jsonl(out / "items.jsonl")


@pytest.mark.parametrize("model_id", PARAMS["generate"]["models"])
def test_chair_recovers_injected_hallucinations(items: list[dict], model_id: str) -> None:
    backend = make_backend(PARAMS["models"][model_id], items=items, model_name=model_id)
    requests = [
        caption_request(item, inst_id, PARAMS["instructions"][inst_id], model_id, {"seed": 0})
        for inst_id in PARAMS["generate"]["instructions"]
        for item in items
    ]
    responses = backend.generate(requests)
    gt = {item["image_id"]: item["gt_objects"] for item in items}
    records = [
        (r.request_id, r.text, gt[q.image_id]) for q, r in zip(requests, responses, strict=True)
    ]
    result = chair_scores(records, ObjectParser())
    injected = [
        [i["name"] for i in r.meta["injected"] if i["kind"] in IN_DOMAIN_KINDS] for r in responses
    ]
    for caption, expected in zip(result["captions"], injected, strict=True):
        assert Counter(caption["hallucinated"]) == Counter(expected), caption["caption"]
    n_injected_captions = sum(bool(e) for e in injected)
    assert result["overall"]["CHAIRs"] == n_injected_captions / len(injected)
    n_mentions = sum(
        len(r.meta["mentioned"]) + len(e) for r, e in zip(responses, injected, strict=True)
    )
    assert result["overall"]["n_mentions"] == n_mentions
    assert result["overall"]["CHAIRi"] == sum(map(len, injected)) / n_mentions
    assert n_injected_captions > 0  # the profile really injects something
