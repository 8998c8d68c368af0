"""Synonym and double-word tables of the MSCOCO vocabulary.

* :data:`BUILTIN_SYNONYMS`: halluscope's own synonym table (surface words an English caption
  uses for each class), the default of :class:`halluscope.objects.parser.ObjectParser`;
* :data:`DOUBLE_WORDS` (from :data:`COCO_DOUBLE_WORDS`, :data:`ANIMAL_WORDS`,
  :data:`VEHICLE_WORDS`): the reference CHAIR bigram merge table;
* :data:`BUILTIN_NON_OBJECT_BIGRAMS`: extra bigrams of the builtin table.
"""

from __future__ import annotations

__all__ = [
    "ANIMAL_WORDS",
    "BUILTIN_NON_OBJECT_BIGRAMS",
    "BUILTIN_SYNONYMS",
    "COCO_DOUBLE_WORDS",
    "DOUBLE_WORDS",
    "VEHICLE_WORDS",
]

# --------------------------------------------------------------------------------------------
# halluscope's own synonym table
# --------------------------------------------------------------------------------------------

#: class name -> singular surface words or two-word phrases (lower case). Written for
#: halluscope; deliberately *not* the reference list: ambiguous words that fire on unrelated
#: senses are left out (``seat`` of a bike, ``container``, ``computer`` for laptop,
#: ``street light`` for traffic light, ``goat`` for sheep...). Plural forms are not needed: the
#: parser normalises tokens and, for this table, also the table's own entries.
BUILTIN_SYNONYMS: dict[str, tuple[str, ...]] = {
    "person": (
        "person", "people", "man", "woman", "boy", "girl", "child", "kid", "baby", "toddler",
        "infant", "teenager", "teen", "adult", "guy", "lady", "gentleman", "player", "athlete",
        "skier", "snowboarder", "surfer", "skateboarder", "skater", "rider", "biker", "cyclist",
        "bicyclist", "motorcyclist", "pedestrian", "passenger", "tourist", "traveler", "traveller",
        "astronaut", "chef", "baker", "waiter", "waitress", "worker", "policeman", "policewoman",
        "officer", "soldier", "doctor", "nurse", "student", "teacher", "batter", "catcher",
        "umpire", "referee", "jockey", "cowboy", "farmer", "fisherman", "vendor", "shopper",
        "customer", "spectator", "bride", "groom", "mother", "father", "mom", "dad", "son",
        "daughter", "brother", "sister", "grandmother", "grandfather", "businessman",
        "businesswoman", "tennis player", "baseball player",
    ),
    "bicycle": ("bicycle", "bike", "mountain bike", "bmx", "tricycle", "unicycle"),
    "car": (
        "car", "automobile", "sedan", "suv", "van", "minivan", "taxi", "cab", "taxicab", "jeep",
        "hatchback", "convertible", "limousine", "limo", "coupe", "police car",
    ),
    "motorcycle": (
        "motorcycle", "motorbike", "motor bike", "motor cycle", "scooter", "moped", "dirt bike",
        "vespa",
    ),
    "airplane": (
        "airplane", "aeroplane", "plane", "jet", "jetliner", "airliner", "aircraft", "air plane",
        "biplane", "seaplane", "warplane",
    ),
    "bus": ("bus", "minibus", "double-decker", "trolleybus", "school bus"),
    "train": ("train", "locomotive", "tram", "streetcar", "railcar", "caboose", "freight train"),
    "truck": ("truck", "lorry", "pickup", "pickup truck", "firetruck", "fire truck"),
    "boat": (
        "boat", "ship", "sailboat", "yacht", "canoe", "kayak", "ferry", "motorboat", "speedboat",
        "rowboat", "dinghy", "tugboat", "barge", "vessel", "catamaran", "gondola", "lifeboat",
        "houseboat", "jet ski",
    ),
    "traffic light": ("traffic light", "stoplight", "stop light", "traffic signal"),
    "fire hydrant": ("fire hydrant", "hydrant", "fireplug"),
    "stop sign": ("stop sign",),
    "parking meter": ("parking meter",),
    "bench": ("bench", "pew", "park bench"),
    "bird": (
        "bird", "pigeon", "seagull", "gull", "duck", "duckling", "goose", "swan", "parrot", "owl",
        "eagle", "hawk", "sparrow", "crow", "raven", "pelican", "flamingo", "heron", "chicken",
        "hen", "rooster", "turkey", "peacock", "ostrich", "penguin", "finch", "robin",
        "hummingbird", "woodpecker", "dove", "songbird", "seabird",
    ),
    "cat": ("cat", "kitten", "kitty", "feline", "tabby"),
    "dog": (
        "dog", "puppy", "pup", "doggy", "doggie", "canine", "hound", "terrier", "poodle",
        "retriever", "labrador", "bulldog", "beagle", "husky", "dachshund", "chihuahua", "collie",
        "pug", "spaniel", "corgi", "greyhound", "dalmatian", "rottweiler", "pitbull", "sheepdog",
    ),
    "horse": ("horse", "pony", "foal", "colt", "stallion", "mare"),
    "sheep": ("sheep", "lamb", "ram", "ewe"),
    "cow": ("cow", "cattle", "calf", "bull", "ox", "oxen", "heifer", "longhorn"),
    "elephant": ("elephant",),
    "bear": ("bear", "grizzly", "panda"),
    "zebra": ("zebra",),
    "giraffe": ("giraffe",),
    "backpack": ("backpack", "rucksack", "knapsack", "bookbag"),
    "umbrella": ("umbrella", "parasol"),
    "handbag": ("handbag", "purse", "tote", "pocketbook", "shoulder bag"),
    "tie": ("tie", "necktie", "bowtie", "bow tie"),
    "suitcase": ("suitcase", "suit case", "luggage", "baggage"),
    "frisbee": ("frisbee", "flying disc"),
    "skis": ("ski", "skis"),
    "snowboard": ("snowboard",),
    "sports ball": ("ball", "soccer ball", "tennis ball"),
    "kite": ("kite",),
    "baseball bat": ("baseball bat", "bat"),
    "baseball glove": ("baseball glove", "mitt", "baseball mitt"),
    "skateboard": ("skateboard", "skate board"),
    "surfboard": ("surfboard", "surf board", "bodyboard", "longboard", "shortboard", "wakeboard"),
    "tennis racket": ("tennis racket", "racket", "racquet", "tennis racquet"),
    "bottle": ("bottle",),
    "wine glass": ("wine glass", "wineglass", "champagne glass"),
    "cup": ("cup", "mug", "teacup"),
    "fork": ("fork",),
    "knife": ("knife", "pocketknife"),
    "spoon": ("spoon", "teaspoon"),
    "bowl": ("bowl",),
    "banana": ("banana",),
    "apple": ("apple",),
    "sandwich": ("sandwich", "burger", "hamburger", "cheeseburger", "panini", "sub sandwich"),
    "orange": ("orange",),
    "broccoli": ("broccoli",),
    "carrot": ("carrot",),
    "hot dog": ("hot dog", "hotdog"),
    "pizza": ("pizza",),
    "donut": ("donut", "doughnut"),
    "cake": ("cake", "cupcake", "cheesecake"),
    "chair": ("chair", "armchair", "stool", "highchair"),
    "couch": ("couch", "sofa", "loveseat", "settee", "futon"),
    "potted plant": ("potted plant", "houseplant", "house plant", "flowerpot", "flower pot"),
    "bed": ("bed",),
    "dining table": ("dining table", "table", "desk", "kitchen table", "picnic table"),
    "toilet": ("toilet", "urinal", "commode", "potty"),
    "tv": ("tv", "television", "monitor", "tv set"),
    "laptop": ("laptop", "netbook", "macbook", "laptop computer"),
    "mouse": ("mouse", "computer mouse"),
    "remote": ("remote", "remote control", "controller"),
    "keyboard": ("keyboard",),
    "cell phone": (
        "cell phone", "cellphone", "phone", "smartphone", "mobile phone", "iphone", "telephone",
    ),
    "microwave": ("microwave", "microwave oven"),
    "oven": ("oven", "stove", "stovetop"),
    "toaster": ("toaster", "toaster oven"),
    "sink": ("sink", "washbasin"),
    "refrigerator": ("refrigerator", "fridge", "freezer"),
    "book": ("book", "novel", "textbook", "paperback"),
    "clock": ("clock",),
    "vase": ("vase",),
    "scissors": ("scissors", "scissor"),
    "teddy bear": ("teddy bear", "teddy", "teddybear", "stuffed animal"),
    "hair drier": ("hair drier", "hair dryer", "hairdryer", "blow dryer", "blowdryer"),
    "toothbrush": ("toothbrush", "tooth brush"),
}  # fmt: skip

# --------------------------------------------------------------------------------------------
# double words (bigram merge table)
# --------------------------------------------------------------------------------------------

#: Two-word names the reference CHAIR merges into one token before the synonym lookup (listed
#: there as "common double words in MSCOCO"). ``home plate`` and ``train track`` merge into
#: non-objects, which stops ``plate``/``train`` from firing; ``motor bike`` merges although the
#: reference synonym is ``' motor bike'`` (leading space), so it never counts;
#: ``stove top oven`` has three words and never matches a bigram.
COCO_DOUBLE_WORDS: tuple[str, ...] = (
    "motor bike", "motor cycle", "air plane", "traffic light", "street light", "traffic signal",
    "stop light", "fire hydrant", "stop sign", "parking meter", "suit case", "sports ball",
    "baseball bat", "baseball glove", "tennis racket", "wine glass", "hot dog", "cell phone",
    "mobile phone", "teddy bear", "hair drier", "potted plant", "bow tie", "laptop computer",
    "stove top oven", "home plate", "train track",
)  # fmt: skip
#: ``baby <x>`` / ``adult <x>`` -> ``<x>`` (otherwise ``baby``/``adult`` fire as person).
ANIMAL_WORDS: tuple[str, ...] = (
    "bird", "cat", "dog", "horse", "sheep", "cow", "elephant", "bear", "zebra", "giraffe", "animal",
    "cub",
)  # fmt: skip
#: ``passenger <x>`` -> ``<x>`` (otherwise ``passenger`` fires as person).
VEHICLE_WORDS: tuple[str, ...] = ("jet", "train")


def _reference_double_words() -> dict[str, str]:
    table = {w: w for w in COCO_DOUBLE_WORDS}
    for animal in ANIMAL_WORDS:
        table[f"baby {animal}"] = animal
        table[f"adult {animal}"] = animal
    for vehicle in VEHICLE_WORDS:
        table[f"passenger {vehicle}"] = vehicle
    table["bow tie"] = "tie"
    table["toilet seat"] = "toilet"
    # pattern singularizes "glass" to "glas", so a singular "wine glass" arrives as "wine glas".
    table["wine glas"] = "wine glass"
    return table


#: The reference CHAIR bigram table: normalised bigram -> the word it stands for.
DOUBLE_WORDS: dict[str, str] = _reference_double_words()

#: Extra bigrams for the builtin table that name something other than their head noun, so that
#: the head does not fire (``toilet paper`` is not a toilet, ``ski slope`` is not skis).
BUILTIN_NON_OBJECT_BIGRAMS: tuple[str, ...] = (
    "toilet paper", "ski slope", "ski lift", "ski resort", "ski pole", "ski run", "bus stop",
    "train station", "railroad track", "tennis court", "flower bed", "hot tub",
)  # fmt: skip
