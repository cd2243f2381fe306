"""The pool of warm workers (trusted): the pool and its handle on each worker, the worker's serve loop, the
zygote that forks workers warm, the warm-up, and the frames they talk in."""
