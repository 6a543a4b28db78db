/** Uniform numbers in [0, 1), the same sequence for the same seed. */
export function mulberry32(seed: number): () => number;
