# The reproduction report (paper/main.tex), built from the per-profile tables and figures.
# Sections: (a) CAOS on the real captions, (b) Tri-HE and (c) PhD on their released questions,
# (d) the simulated demo. The active profile's section is built; another profile's section is
# included when that profile has run (its results/report/<profile>/ exists), and then every
# file it includes is a declared input, so a missing one fails the build.
import os

PAPER_SECTIONS = {  # profile -> (section template, tables, figures)
    "pope-captions": (
        "caos-real",
        ["caos_comparison", "caos_agreement", "caos_table1", "caos_ratios", "caos_sensitivity",
         "caos_setting", "caos_differences"],
        ["caos_radar"],
    ),
    "trihe-gqa": ("trihe-real", ["trihe_table"], ["trihe_bars"]),
    "phd-ccs": ("phd-real", ["phd_table"], ["phd_heatmap"]),
    "demo": (
        "demo",
        ["caos_table1", "caos_table2", "caos_ratios", "caos_setting", "caos_sensitivity",
         "trihe_table", "phd_table", "nope_table", "nope_breakdown"],
        CAOS_FIGURES + ["trihe_bars", "phd_heatmap", "nope_question_types"],
    ),
}


def paper_profiles():
    """The profiles whose section the report includes: the active one and those that ran."""
    return [
        p for p in PAPER_SECTIONS if p == RUN or os.path.isdir(f"results/report/{p}")
    ]


def paper_inputs():
    files = []
    for profile in paper_profiles():
        _, tables, figures = PAPER_SECTIONS[profile]
        files += [f"results/report/{profile}/{t}.tex" for t in tables]
        files += [f"results/figures/{profile}/{f}.pdf" for f in figures]
    return files


rule paper:
    """The reproduction report: results/paper/report.pdf (pdflatex, reproducible timestamps)."""
    input:
        main="paper/main.tex",
        sections=expand("paper/sections/{s}.tex", s=[PAPER_SECTIONS[p][0] for p in paper_profiles()]),
        files=paper_inputs(),
    output:
        pdf="results/paper/report.pdf",
        sections="results/paper/sections.tex",
    params:
        sections=json_arg([PAPER_SECTIONS[p][0] for p in paper_profiles()]),
        code=code_version("tables"),
    conda:
        "../envs/halluscope.yaml"
    log:
        "logs/paper.log",
    shell:
        "halluscope stage paper --main {input.main} --sections {params.sections} "
        "--out-sections {output.sections} --out {output.pdf} > {log} 2>&1"
