"""The operator's commands: the reference engine's store opened for a person — its manual
controls, its queue of runs waiting for someone, one workflow inspected, old checkpoints
compacted."""
