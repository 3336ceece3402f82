/** The names of the built-in invariants of `eventloom/testing`, as failures report them. */
export const INVARIANTS = {
  terminal: 'no event after a terminal state',
  transitions: 'every status transition is legal',
  acknowledged: 'every acknowledged record survives a crash',
  rehydration: 'a rehydrated run equals an uninterrupted one',
  replay: 'replay from a step equals its source for deterministic steps',
  settle: 'runs settle',
} as const;
