"""AMBER (Wang et al., 2023): the generative task (CHAIR, Cover, Hal, Cog) on its annotations."""
