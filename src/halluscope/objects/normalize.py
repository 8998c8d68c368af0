"""Word normalisation for CHAIR-style object parsing.

Two variants, named after the reference CHAIR builds whose ground truth we ship:

``singularize`` ("pattern" variant)
    A reimplementation of the *behaviour* of ``pattern.en.singularize`` (pattern 3.6, BSD),
    which the original CHAIR code (Rohrbach et al. 2018) applies to every token. pattern does not
    install on current Pythons, and its quirks change CHAIR numbers, so they are reproduced on
    purpose: ``bus`` -> ``bu`` (the pattern CHAIR never finds a bus), ``glass`` -> ``glas`` (hence
    the reference ``wine glas`` rule), ``glasses`` -> ``glass``, ``this`` -> ``thi``,
    ``four`` -> ``fmy`` (the irregular ``our -> my`` entry matches any suffix), ``slice`` ->
    ``slouse``, ``pasta`` -> ``pastum``... Checked token by token against the ``words`` field of
    the reference CHAIR outputs (``tests/test_parser.py``).

``lemmatize`` ("lemmatizer" variant)
    A small rule-based stand-in for the noun branch of WordNet's ``morphy`` (the OPERA/HALC CHAIR
    variant uses NLTK's POS tagger + WordNet lemmatiser; neither the tagger nor WordNet can be
    downloaded here). It undoes regular English plurals with the morphy suffix rules, keeps words
    that are already singular (``bus``, ``glass``, ``lens``), and knows the irregular plurals of
    everyday nouns. It does not lemmatise verbs or adjectives; CHAIR only looks at nouns.

Both functions expect lower-case input: CHAIR lower-cases captions before tokenising.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

__all__ = ["VARIANTS", "get_normalizer", "lemmatize", "singularize"]

# --------------------------------------------------------------------------------------------
# pattern-like singularize
# --------------------------------------------------------------------------------------------

# Words that are their own plural / have no plural. pattern returns the word unchanged when the
# lower-cased word is a *suffix* of one of these (so "ice" stays "ice" because of "advice", and
# "is" stays "is" because of "chassis"); we precompute every suffix.
_SAME_PLURAL = (
    "bison debris headquarters pincers trout bream diabetes herpes pliers tuna breeches djinn "
    "high-jinks proceedings whiting britches eland homework rabies wildebeest carp elk innings "
    "salmon chassis flounder jackanapes scissors christmas gallows mackerel series clippers "
    "georgia measles shears cod graffiti mews species contretemps mumps swine corps news swiss"
).split()
_MASS_NOUNS = (
    "advice equipment happiness luggage news software bread fruit information mathematics "
    "progress understanding butter furniture ketchup mayonnaise research water cheese garbage "
    "knowledge meat rice electricity gravel love mustard sand"
).split()
_KEEP_SUFFIXES = frozenset(w[i:] for w in _SAME_PLURAL + _MASS_NOUNS for i in range(len(w) + 1))

# Nouns in -ie whose plural is -ies (pattern keeps the -ie; "pie"/"tie" are listed there with a
# regex anchor that is compared literally, so "ties" -> "ty" and "pies" -> "py").
_IE_NOUNS = (
    "alergie cutie hoagie newbie softie veggie auntie doggie hottie nightie sortie weenie beanie "
    "eyrie indie oldie stoolie yuppie birdie freebie junkie sweetie zombie bogie goonie laddie "
    "pixie techie bombie groupie laramie quickie collie hankie lingerie reverie toughie cookie "
    "hippie meanie rookie valkyrie"
).split()
_IE_PLURAL_ENDINGS = tuple(w + "s" for w in _IE_NOUNS)

# Irregular plural endings, tried in this order against the end of the word (first hit wins).
_IRREGULAR_ENDINGS: tuple[tuple[str, str], ...] = (
    ("atlantes", "atlas"),
    ("atlases", "atlas"),
    ("axes", "axe"),
    ("beeves", "beef"),
    ("brethren", "brother"),
    ("children", "child"),
    ("corpora", "corpus"),
    ("corpuses", "corpus"),
    ("ephemerides", "ephemeris"),
    ("feet", "foot"),
    ("ganglia", "ganglion"),
    ("geese", "goose"),
    ("genera", "genus"),
    ("genii", "genie"),
    ("graffiti", "graffito"),
    ("helves", "helve"),
    ("kine", "cow"),
    ("leaves", "leaf"),
    ("loaves", "loaf"),
    ("men", "man"),
    ("mongooses", "mongoose"),
    ("monies", "money"),
    ("moves", "move"),
    ("mythoi", "mythos"),
    ("numena", "numen"),
    ("occipita", "occiput"),
    ("octopodes", "octopus"),
    ("opera", "opus"),
    ("opuses", "opus"),
    ("our", "my"),
    ("oxen", "ox"),
    ("penes", "penis"),
    ("penises", "penis"),
    ("people", "person"),
    ("sexes", "sex"),
    ("soliloquies", "soliloquy"),
    ("teeth", "tooth"),
    ("testes", "testis"),
    ("trilbys", "trilby"),
    ("turves", "turf"),
    ("zoa", "zoon"),
)

# Prepositions of compounds such as "mothers-in-law": only the head noun is singularised.
_COMPOUND_PREPOSITIONS = frozenset(
    "about before during of till above behind except off to across below for on under after "
    "beneath from onto until among beside in out unto around besides into over upon at between "
    "near since with athwart betwixt beyond but by".split()
)


def _analysis_rule(m: re.Match[str]) -> str:
    # pattern's replacement keeps a stray "a" when the stem is "analy" but not word-initial
    # ("psychoanalyses" -> "psychoanalyasis"); every other stem simply takes -sis.
    stem = m.group(1)
    return stem + ("asis" if stem == "analy" else "sis")


# Ordered suffix rules: the first pattern that matches is applied (re.sub), as in pattern.
_RULES: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = tuple(
    (re.compile(p, re.IGNORECASE), r)
    for p, r in (
        (r"(.)ae$", r"\1a"),
        (r"(.)itis$", r"\1itis"),
        (r"(.)eaux$", r"\1eau"),
        (r"(quiz)zes$", r"\1"),
        (r"(matr)ices$", r"\1ix"),
        (r"(ap|vert|ind)ices$", r"\1ex"),
        (r"^(ox)en", r"\1"),  # not anchored at the end in pattern
        (r"(alias|status)es$", r"\1"),
        (r"([octp|vir])i$", r"\1us"),  # a character class in pattern, not "octop|vir"
        (r"(cris|ax|test)es$", r"\1is"),
        (r"(shoe)s$", r"\1"),
        (r"(o)es$", r"\1"),
        (r"(bus)es$", r"\1"),
        (r"([m|l])ice$", r"\1ouse"),  # "slice" -> "slouse", "police" -> "polouse"
        (r"(x|ch|ss|sh)es$", r"\1"),
        (r"(m)ovies$", r"\1ovie"),
        (r"(.)ombies$", r"\1ombie"),
        (r"(s)eries$", r"\1eries"),
        (r"([^aeiouy]|qu)ies$", r"\1y"),
        (r"([aeo]l)ves$", r"\1f"),
        (r"([^d]ea)ves$", r"\1f"),
        (r"arves$", "arf"),
        (r"erves$", "erve"),
        (r"([nlw]i)ves$", r"\1fe"),
        (r"([lr])ves$", r"\1f"),
        (r"([aeo])ves$", r"\1ve"),
        (r"(sive)s$", r"\1"),
        (r"(tive)s$", r"\1"),
        (r"(hive)s$", r"\1"),
        (r"([^f])ves$", r"\1fe"),
        (r"(^analy)ses$", r"\1sis"),
        (r"(analy|ba|diagno|parenthe|progno|synop|the)ses$", _analysis_rule),
        (r"(.)opses$", r"\1opsis"),
        (r"(.)yses$", r"\1ysis"),
        (r"(h|d|r|o|n|b|cl|p)oses$", r"\1ose"),
        (r"(fruct|gluc|galact|lact|ket|malt|rib|sacchar|cellul)ose$", r"\1ose"),
        (r"(.)oses$", r"\1osis"),
        (r"([ti])a$", r"\1um"),  # "data" -> "datum", but also "pasta" -> "pastum"
        (r"(n)ews$", r"\1ews"),
        (r"s$", ""),
    )
)


def _singularize(word: str) -> str:
    if "-" in word:
        parts = word.split("-")
        if parts[1] in _COMPOUND_PREPOSITIONS:
            return _singularize(parts[0]) + "-" + "-".join(parts[1:])
    if word.endswith("'"):
        return _singularize(word[:-1]) + "'s"  # "dogs'" -> "dog's"; a bare "'" -> "'s"
    w = word.lower()
    if w in _KEEP_SUFFIXES:
        return word
    if w.endswith(_IE_PLURAL_ENDINGS):
        return w
    for ending, singular in _IRREGULAR_ENDINGS:
        if w.endswith(ending):
            return word[: len(word) - len(ending)] + singular
    for pattern, repl in _RULES:
        if pattern.search(word):
            return pattern.sub(repl, word, count=1)
    return word


@lru_cache(maxsize=200_000)
def singularize(word: str) -> str:
    """Singular of ``word`` the way ``pattern.en.singularize`` computes it (quirks included).

    Reference CHAIR numbers depend on those quirks (e.g. ``bus`` -> ``bu``), so this is a
    behavioural copy, not a good singulariser.
    """
    return _singularize(word)


# --------------------------------------------------------------------------------------------
# rule-based noun lemmatiser (WordNet-like)
# --------------------------------------------------------------------------------------------

# Irregular plurals of everyday nouns (a subset of WordNet's noun.exc, written for captions).
_LEMMA_EXCEPTIONS: dict[str, str] = {
    "children": "child",
    "men": "man",
    "women": "woman",
    "people": "people",
    "feet": "foot",
    "teeth": "tooth",
    "geese": "goose",
    "mice": "mouse",
    "oxen": "ox",
    "knives": "knife",
    "wives": "wife",
    "lives": "life",
    "leaves": "leaf",
    "loaves": "loaf",
    "shelves": "shelf",
    "wolves": "wolf",
    "calves": "calf",
    "halves": "half",
    "scarves": "scarf",
    "hooves": "hoof",
    "thieves": "thief",
    "sheaves": "sheaf",
    "dice": "die",
    "lice": "louse",
    "data": "datum",
    "criteria": "criterion",
    "cacti": "cactus",
    "fungi": "fungus",
    "octopi": "octopus",
    "phenomena": "phenomenon",
    "bacteria": "bacterium",
    "media": "medium",
    "alumni": "alumnus",
    "buses": "bus",
    "gases": "gas",
    "lenses": "lens",
    "atlases": "atlas",
    "axes": "axe",
    "taxes": "tax",
    "boxes": "box",
    "foxes": "fox",
    "potatoes": "potato",
    "tomatoes": "tomato",
    "heroes": "hero",
    "mangoes": "mango",
    "shoes": "shoe",
    "toes": "toe",
    "hoes": "hoe",
    "canoes": "canoe",
    "ties": "tie",
    "pies": "pie",
    "cookies": "cookie",
    "movies": "movie",
    "brownies": "brownie",
    "goalies": "goalie",
    "selfies": "selfie",
    "hoodies": "hoodie",
    "zombies": "zombie",
}
# Words in -s that are singular (or only plural) and must not lose the -s.
_LEMMA_KEEP = frozenset(
    (
        "bus gas lens atlas canvas cactus octopus virus status campus circus bonus walrus "
        "hippopotamus asparagus hummus citrus iris chassis species series news scissors "
        "pants jeans shorts trousers glasses sunglasses goggles binoculars tongs pliers "
        "clothes mathematics physics economics police sheep deer fish moose bison "
        "has was is this his its yes us plus thus always perhaps towards afterwards"
    ).split()
)
# morphy's noun detachment rules, longest suffix first.
_MORPHY_NOUN = (
    ("ches", "ch"),
    ("shes", "sh"),
    ("sses", "ss"),
    ("xes", "x"),
    ("zes", "z"),
    ("men", "man"),
    ("ies", "y"),
    ("s", ""),
)


@lru_cache(maxsize=200_000)
def lemmatize(word: str) -> str:
    """Noun lemma of ``word`` with WordNet-like rules (``buses`` -> ``bus``, ``bus`` stays).

    A stand-in for ``WordNetLemmatizer().lemmatize(word, 'n')``: irregular plurals from a short
    exception list, morphy's suffix rules otherwise; words ending in ``ss``/``us``/``sis`` (and a
    few other singular ``-is`` words) and the listed plural-only or invariant nouns are kept.
    """
    if word in _LEMMA_EXCEPTIONS:
        return _LEMMA_EXCEPTIONS[word]
    if word in _LEMMA_KEEP or len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith(("ss", "us", "sis", "tis", "nnis", "axis", "iris", "his")):
        return word  # singular already (glass, bus, analysis, tennis); "skis" still -> "ski"
    for suffix, repl in _MORPHY_NOUN:
        if word.endswith(suffix):
            if suffix == "ies" and len(word) <= 4:
                return word
            return word[: len(word) - len(suffix)] + repl
    return word


VARIANTS: dict[str, Callable[[str], str]] = {"pattern": singularize, "lemmatizer": lemmatize}


def get_normalizer(variant: str) -> Callable[[str], str]:
    """The word normaliser of a CHAIR variant (``pattern`` or ``lemmatizer``)."""
    try:
        return VARIANTS[variant]
    except KeyError:
        choices = sorted(VARIANTS)
        raise ValueError(f"unknown normalisation variant {variant!r}; one of {choices}") from None
