"""PhD (Liu et al., CVPR 2025): yes/no questions in four modes (base, iac, icc, ccs) over five
tasks; the PhD Index per mode x task."""
