"""killpoint: kill an agent's worker at every boundary, resume it, and prove it stayed safe."""
