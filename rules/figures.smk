rule figures_all:
    """DVC stage target: every figure."""
    input:
        benchmark_figure_files(),
