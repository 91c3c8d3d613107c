// Deterministic pseudo-random data: the same --seed gives the same catalogue on every machine.

/** mulberry32: tiny, fast, and good enough for demo data (not for anything secret). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A seed for one part of the data, so adding a part (users) never changes another (the catalogue). */
export function derivedSeed(seed: number, part: string): number {
  let h = seed >>> 0;
  for (const ch of part) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return h;
}

export type Random = ReturnType<typeof rng>;

export const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
export const between = (random: Random, min: number, max: number): number => min + Math.floor(random() * (max - min + 1));

export const ADJECTIVES = [
  'Silver',
  'Velvet',
  'Electric',
  'Quiet',
  'Golden',
  'Hollow',
  'Neon',
  'Paper',
  'Wild',
  'Crystal',
  'Midnight',
  'Broken',
  'Northern',
  'Distant',
  'Scarlet',
  'Gentle',
  'Frozen',
  'Burning',
  'Lonely',
  'Secret',
  'Blue',
  'Static',
  'Lunar',
  'Amber',
  'Restless',
  'Hidden',
  'Wandering',
  'Falling',
  'Sleeping',
  'Bright',
] as const;

export const NOUNS = [
  'Owls',
  'Harbour',
  'Rivers',
  'Machines',
  'Lanterns',
  'Echoes',
  'Satellites',
  'Foxes',
  'Tides',
  'Gardens',
  'Mirrors',
  'Horizons',
  'Wolves',
  'Signals',
  'Cathedrals',
  'Comets',
  'Forests',
  'Engines',
  'Islands',
  'Shadows',
  'Orchards',
  'Storms',
  'Bridges',
  'Sparrows',
  'Waves',
  'Ghosts',
  'Mountains',
  'Radios',
  'Deserts',
  'Dreams',
] as const;
