# HallusionBench: no pipeline rule yet. The benchmark is scored by hand from an answers file
# (`halluscope hallusionbench --answers FILE --out OUT.json`, check.py); its DVC stage, its
# answers rule and its demo table come with a profile that enables it (a params section
# `hallusionbench:`). Absent section (params.yaml today) = disabled: no job, no DVC stage.
