# Shared helpers: config validation, wildcard constraints and the lists that define the DAG.
from halluscope.config import validate as validate_params

validate_params(config, source="params.yaml (+ any --configfile/--config overrides)")

# RUN keys every result path (results/<area>/<RUN>/..., the wildcard {profile}): the profile name, so that two profiles
# never write the same file (even two profiles of one dataset). DATASET is the loader's kind.
RUN = config["profile"]
DATASET = config["data"]["dataset"]
MODELS = config["generate"]["models"]
INSTRUCTIONS = config["generate"]["instructions"]
EMBEDDERS = config["embed"]["embedders"]
# The one software environment of every rule (with --software-deployment-method conda), named
# once: a rule's conda path is relative to its own file, so each rules file had its own "../".
HALLUSCOPE_ENV = f"{workflow.basedir}/envs/halluscope.yaml"
# The packaged benchmarks (src/halluscope/benchmarks/<name>/: rules, schema fragment, stages).
from halluscope.benchmarks import BENCHMARKS


# Only the active profile's results are buildable: another profile's files are inputs at most
# (the report), never rebuilt with this profile's params.
wildcard_constraints:
    profile=RUN.replace(".", r"\."),
    model=r"[A-Za-z0-9_.-]+",
    instruction=r"[A-Za-z0-9_-]+",
    embedder=r"[A-Za-z0-9_-]+",
    setting=r"random|popular|adversarial",


def settings_arg(settings, *wildcards):
    """A rule's one ``params:`` value: the JSON of ``settings.from_config(config, ...)`` (a
    halluscope.settings.StageSettings class) with the job's ``wildcards`` of those names; the
    shell passes it as ``--settings {params.settings:q}``. Snakemake reruns a job when it
    changes, that is when a key its settings read changes. Built per job, when the job is in
    the DAG: a disabled benchmark's settings are never read."""
    return lambda wc: settings.from_config(config, **{w: wc[w] for w in wildcards}).to_json()


def json_arg(value):
    """A value (a map of input paths) as one JSON argument; the shell line quotes it (``:q``),
    as it quotes every placeholder."""
    import json

    return json.dumps(value, sort_keys=True)


def project_file(value):
    """Inputs for a config value naming a file: a project file is a tracked input; a registered
    data file (halluscope.data.sources, e.g. trihe/tri-he.json) is resolved by the stage."""
    from halluscope.data.sources import SOURCES

    return [] if value is None or value in SOURCES else [value]


def image_list_input(value):
    """The image list as an input of the data job when it is a project file, ``ancient``: the
    data job reads only its image ids, which :func:`image_list_ids` passes as a param, so that
    editing a caption of the user's file reruns that model's jobs and not every model's."""
    return [ancient(path) for path in project_file(value)]


def image_list_ids(paths):
    """The sha256 of the image ids, in file order, of the data job's image list input (a param
    of the job: it reruns when the ids change, not when a caption does); empty without one
    (none, or a registered file, pinned by its checksum)."""
    import hashlib
    from pathlib import Path

    from halluscope.io import InputError, read_json_records

    paths = [paths] if isinstance(paths, str) else list(paths)
    if not paths or not Path(paths[0]).is_file():
        return ""
    try:
        records = read_json_records(paths[0])
    except InputError:
        return "unreadable"  # the data job reports the file and line
    ids = [str(r.get("image_id")) for r in records if isinstance(r, dict)]
    return hashlib.sha256("\n".join(dict.fromkeys(ids)).encode()).hexdigest()


def user_recordings(wildcards):
    """A replay model's recording of the job's instruction when it is a file of the user's own
    (their captions): an input, so that editing it reruns the job (registered files are pinned
    by their checksums instead)."""
    spec = config["models"].get(wildcards.model, {})
    path = spec.get("path") or (spec.get("paths") or {}).get(wildcards.instruction)
    return project_file(path) if spec.get("backend") == "replay" else []


def response_files(profile=RUN):
    return expand(
        "results/responses/{profile}/{model}/{instruction}.jsonl",
        profile=profile, model=MODELS, instruction=INSTRUCTIONS,
    )


def object_files(profile=RUN):
    return expand(
        "results/objects/{profile}/{model}/{instruction}.jsonl",
        profile=profile, model=MODELS, instruction=INSTRUCTIONS,
    )


def oracle_files(profile=RUN):
    return expand(
        "results/oracle/{profile}/{model}/{instruction}.jsonl",
        profile=profile, model=MODELS, instruction=INSTRUCTIONS,
    )


# The packaged benchmarks keep their rules' helpers in src/halluscope/benchmarks/<name>/
# common.smk; the lists they share are here.
def benchmark_score_files(name, profile=RUN):
    """Every model's results/<name>/<profile>/<model>/scores.json; none when benchmark <name> is
    disabled (an absent params section is disabled)."""
    if not (config.get(name) or {}).get("enabled"):
        return []
    return expand(
        "results/{name}/{profile}/{model}/scores.json", name=name, profile=profile, model=MODELS
    )


def benchmark_table_files(profile=RUN):
    """The packaged benchmarks' (halluscope.benchmarks) LaTeX tables and CSV twins that rule
    `tables` assembles (enabled ones only, registry order)."""
    return [f for b in BENCHMARKS for f in b.table_files(config, profile)]


def benchmark_figure_files(profile=RUN):
    """The packaged benchmarks' figures (enabled benchmarks only, registry order)."""
    return [f for b in BENCHMARKS for f in b.figure_files(config, profile)]


# Job priorities (Snakemake starts the ready job of highest priority first): the single-thread
# LLM jobs and the cheap jobs their inputs wait on come first, so the many light jobs fill the
# other core around them instead of leaving a long LLM job for the end of the run (CAOS's
# common.smk ranks its caption chain below them).
LLM_PRIORITY = 10


_CODE_VERSIONS = {}


def code_version(stage):
    """A rule's ``code`` param: the digest of the Python code its registry stage runs (an edit
    reruns the jobs), and the count of replacements of the job's outputs, empty while there
    were none (a replaced output reruns its job: halluscope.provenance)."""
    from pathlib import Path

    from halluscope.provenance import code_param
    from halluscope.registry import code_digest

    if stage not in _CODE_VERSIONS:
        _CODE_VERSIONS[stage] = code_digest(stage, Path(workflow.basedir))
    return code_param(_CODE_VERSIONS[stage], stage, RUN)


# Snakemake's own report (`snakemake --report report.zip`): PNG figures and CSV twins marked with
# report(); captions in docs/report/ (paths relative to rules/, where the rules are defined).
def report_title(name):
    """The label a figure, table or figure-data file has in the report."""
    titles = dict(title for b in BENCHMARKS for title in b.titles)
    return titles.get(name, name)


def report_figure(path, name, category, captions="../docs/report"):
    """``path`` (a PNG) marked for the report: caption <captions>/<name>.rst (relative to the
    including rules file: a benchmark package keeps its captions beside its rules, ".")."""
    return report(
        path,
        caption=f"{captions}/{name}.rst",
        category=category,
        subcategory="Figures",
        labels={"name": report_title(name), "profile": "{profile}"},
    )


def report_csvs(paths, category, captions="../docs/report"):
    """The CSV twins among ``paths`` (a path or a list) marked for the report (caption
    <captions>/<table>.rst, as in report_figure); other paths (LaTeX, which a browser cannot
    show) unchanged."""
    import os

    def mark(path):
        name, ext = os.path.splitext(os.path.basename(path))
        if ext != ".csv":
            return path
        return report(
            path,
            caption=f"{captions}/{name}.rst",
            category=category,
            subcategory="Tables",
            labels={"name": report_title(name), "profile": "{profile}"},
        )

    return mark(paths) if isinstance(paths, str) else [mark(p) for p in paths]


# The reproduction report (rules/paper.smk): its sections and their inputs, read from the
# sections themselves (halluscope.report.paper).
import os


def paper_sections():
    """The sections whose profile is the active one or has run (its results/report/ exists)."""
    from pathlib import Path

    from halluscope.report.paper import sections

    return [
        s for s in sections(Path(workflow.basedir))
        if s.profile == RUN or os.path.isdir(f"results/report/{s.profile}")
    ]


def rebuild_replaced_outputs():
    """Outputs that `dvc checkout` (or anything but this project's runs) replaced keep a
    Snakemake record that no longer describes them: counted in the project's record, which
    changes their jobs' `code` param, so this run rebuilds them and what depends on them
    (halluscope.provenance). Only the main process looks, never a job's."""
    import sys

    from halluscope.provenance import describe, note, replaced_jobs, replaced_outputs

    if not workflow.is_main_process:
        return
    replaced = replaced_outputs(RUN, profile_result_roots())
    if replaced:
        print(describe(replaced), file=sys.stderr)
        note(RUN, replaced_jobs(workflow.rules, replaced))


def profile_result_roots():
    """The files and folders of the active profile's results (what the guard watches)."""
    import glob

    headline = [f"results/metrics/{RUN}.json", f"metrics/{RUN}"]
    return sorted(glob.glob(f"results/*/{RUN}")) + headline


def record_outputs():
    """After a run: the bytes of every file of the profile's results, so that a later touch that
    keeps them (`dvc commit`) is not taken for a replacement (halluscope.provenance)."""
    from halluscope.provenance import record

    if workflow.is_main_process:
        record(RUN, profile_result_roots())


# The targets of dvc.yaml's stages (`snakemake --cores all <stage>_all`), for the profile DVC
# runs (params.yaml's): a run of another profile (a --configfile overlay) is not DVC's.
# A benchmark's stage is its registry line's dvc_stage (or its code_stages part: CAOS's).
DVC_TARGETS = [
    "data_all",
    *(f"{b.name}_all" for b in BENCHMARKS if b.dvc_stage or b.module("code_stages")),
    "report_all",
]


def dvc_stage_files():
    """What the DVC stages build; `all` builds it too, so `dvc repro` right after `snakemake`
    finds every stage up to date, and the reverse."""
    from pathlib import Path

    from halluscope.dvc_lock import dvc_profile

    if RUN != dvc_profile(Path(workflow.basedir)):
        return []
    return [f for name in DVC_TARGETS for f in getattr(rules, name).input]


def commit_dvc_stages():
    """After a successful run that built every DVC stage's target (or found it up to date):
    `dvc commit` (halluscope.dvc_lock), so that `dvc status` agrees."""
    from pathlib import Path

    from halluscope.dvc_lock import commit_stages

    if not workflow.is_main_process:
        return
    in_dag = {str(f) for job in workflow.dag.jobs for f in job.output}
    built = [str(f) for f in dvc_stage_files()]
    if built and all(f in in_dag for f in built):
        commit_stages(config, Path(workflow.basedir))


def other_profile_tables():
    """The tables (LaTeX and CSV twins) of every other profile that has run."""
    import glob

    found = glob.glob("results/report/*/*.tex") + glob.glob("results/report/*/*.csv")
    return sorted(f for f in found if f.split("/")[2] != RUN)
