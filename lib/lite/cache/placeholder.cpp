// Replaced by the cache simulator's sources.
