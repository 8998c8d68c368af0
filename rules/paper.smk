# The reproduction report (paper/main.tex), built from the per-profile tables and figures.
# Sections: each benchmark folder's paper*.tex (CAOS on the real captions, Tri-HE and PhD on
# their released questions), then paper/sections/ (the simulated demo). The active profile's
# section is built; another profile's section is included when that profile has run (its
# results/report/<profile>/ exists), and then every file it includes (read from the section)
# is a declared input, so a missing one fails the build. The abstract names the sections from
# the same list (results/paper/sections.tex). The log is pdflatex's log of the last pass, its
# warnings and overfull boxes counted first (halluscope.report.paper.build).
rule paper:
    """The reproduction report: results/paper/report.pdf (pdflatex, reproducible timestamps)."""
    input:
        main="paper/main.tex",
        sections=[s.path for s in paper_sections()],
        files=[f for s in paper_sections() for f in s.inputs],
    output:
        pdf="results/paper/report.pdf",
        sections="results/paper/sections.tex",
    params:
        code=code_version("tables"),
    conda:
        HALLUSCOPE_ENV
    log:
        "logs/paper.log",
    shell:
        "halluscope stage paper --main {input.main:q} --sections {input.sections:q} "
        "--out-sections {output.sections:q} --out {output.pdf:q} > {log:q} 2>&1"
