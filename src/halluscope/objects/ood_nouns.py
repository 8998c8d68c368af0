"""Built-in lexicon of concrete, visible nouns outside the 80 MSCOCO classes.

Without an LLM extractor (see the LLM-augmented extraction of CAOS), these nouns are how the
demo finds out-of-domain objects in a caption. Written by the halluscope developers; singular
forms; no word here is an MSCOCO class name or synonym (checked by tests/test_lexicon.py).
Scenery words that are not objects (sky, weather, light) are deliberately left out.
"""

from __future__ import annotations

from pathlib import Path

OOD_NOUNS: tuple[str, ...] = tuple(
    sorted(
        {
            # scenery and structures
            "tree", "grass", "building", "wall", "window", "door", "fence", "road", "street",
            "sidewalk", "bridge", "tower", "house", "roof", "pagoda", "temple", "mountain", "hill",
            "rock", "cloud", "river", "lake", "sea", "beach", "sand", "snow", "field", "forest",
            "bush", "flower", "leaf", "branch", "pole", "sign", "lamp", "lamppost", "statue",
            "column", "stair", "railing", "gate", "floor", "ceiling", "curtain", "carpet", "rug",
            "shelf", "cabinet", "drawer", "mirror", "pillow", "blanket", "painting", "picture",
            "frame", "poster", "shadow", "water", "wave", "launch pad", "launch tower", "smoke",
            "flame", "steam", "moon", "sun", "star",
            # clothing and accessories
            "shirt", "jacket", "coat", "dress", "skirt", "pants", "jeans", "hat", "cap", "helmet",
            "glove", "boot", "shoe", "sock", "scarf", "uniform", "suit", "spacesuit", "glasses",
            "sunglasses", "necklace", "ring", "earring", "watch", "belt", "badge", "medal",
            "collar", "apron", "mask", "bag",
            # things and tools
            "flag", "box", "basket", "plate", "napkin", "tray", "saucer", "jar", "can", "pot",
            "pan", "kettle", "teapot", "candle", "rope", "chain", "wheel", "tire", "engine",
            "rocket", "camera", "tripod", "microphone", "speaker", "guitar", "piano", "drum",
            "paper", "pen", "pencil", "notebook", "newspaper", "magazine", "map", "ticket", "coin",
            "key", "lock", "hammer", "ladder", "bucket", "barrel", "crate", "cart", "wagon", "tent",
            "fountain", "bench press", "desk lamp", "headlight", "windshield", "seatbelt",
            "handlebar",
            # food
            "bread", "cheese", "egg", "tomato", "lettuce", "onion", "potato", "meat", "fish",
            "rice", "soup", "salad", "fruit", "lemon", "strawberry", "grape", "cookie", "coffee",
            "tea", "milk", "sugar", "foam", "latte", "cream", "chocolate", "spoon handle",
            # living things that are not MSCOCO animals
            "tiger", "lion", "monkey", "deer", "rabbit", "squirrel", "fox", "wolf", "goat", "pig",
            "butterfly", "bee", "insect", "petal", "whisker", "fur", "paw",
        }
    )
)  # fmt: skip


def load_lexicon(source: str) -> tuple[str, ...]:
    """``builtin`` or a text file with one noun per line (``#`` starts a comment)."""
    if source == "builtin":
        return OOD_NOUNS
    path = Path(source)
    if not path.exists():
        raise FileNotFoundError(f"extract.ood_lexicon: lexicon file {path} not found")
    from halluscope.io import read_text  # file and line of a byte that is not UTF-8

    words = []
    for line in read_text(path).splitlines():
        word = line.split("#", 1)[0].strip().lower()
        if word:
            words.append(word)
    return tuple(sorted(set(words)))
