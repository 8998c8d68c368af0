rule figures_all:
    """DVC stage target: every figure."""
    input:
        caos_figure_files(),
        benchmark_figure_files(),
