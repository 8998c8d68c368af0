# The reproduction report (paper/main.tex), built from the per-profile tables and figures.
# Sections: (a) CAOS on the real captions, (b) Tri-HE and (c) PhD on their released questions,
# (d) the simulated demo. The active profile's section is built; another profile's section is
# included when that profile has run (its results/report/<profile>/ exists), and then every
# file it includes is a declared input, so a missing one fails the build.
rule paper:
    """The reproduction report: results/paper/report.pdf (pdflatex, reproducible timestamps)."""
    input:
        main="paper/main.tex",
        sections=expand("paper/sections/{s}.tex", s=[paper_sections()[p][0] for p in paper_profiles()]),
        files=paper_inputs(),
    output:
        pdf="results/paper/report.pdf",
        sections="results/paper/sections.tex",
    params:
        sections=json_arg([paper_sections()[p][0] for p in paper_profiles()]),
        code=code_version("tables"),
    conda:
        "../envs/halluscope.yaml"
    log:
        "logs/paper.log",
    shell:
        "halluscope stage paper --main {input.main} --sections {params.sections} "
        "--out-sections {output.sections} --out {output.pdf} > {log} 2>&1"
