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

/**
 * The catalogue's words, per language (issue 33: names as people write them, accents included):
 * Brazilian Portuguese, Spanish, French and German, and English. A name is an adjective and a noun in
 * the language's order (agreeing: the nouns of a language share gender and number, plural); a band's
 * name is a noun with the language's article.
 */
export interface Language {
  article: string;
  adjectiveFirst: boolean;
  adjectives: readonly string[];
  nouns: readonly string[];
}

// prettier-ignore
export const LANGUAGES: readonly Language[] = [
  {
    article: 'As',
    adjectiveFirst: false,
    adjectives: ['Elétricas', 'Douradas', 'Órfãs', 'Selvagens', 'Azuis', 'Distantes', 'Românticas', 'Tropicais', 'Líquidas', 'Eternas'],
    nouns: ['Canções', 'Noites', 'Estações', 'Ilusões', 'Marés', 'Águas', 'Ondas', 'Saudades', 'Memórias', 'Lágrimas'],
  },
  {
    article: 'Las',
    adjectiveFirst: false,
    adjectives: ['Eléctricas', 'Perdidas', 'Últimas', 'Pequeñas', 'Rápidas', 'Mágicas', 'Lejanas', 'Dormidas', 'Salvajes', 'Azules'],
    nouns: ['Canciones', 'Noches', 'Lágrimas', 'Estrellas', 'Mañanas', 'Señales', 'Flores', 'Olas', 'Ánimas', 'Ciudades'],
  },
  {
    article: 'Les',
    adjectiveFirst: false,
    adjectives: ['Électriques', 'Dorées', 'Perdues', 'Éternelles', 'Bleues', 'Sauvages', 'Légères', 'Étranges', 'Naïves', 'Lointaines'],
    nouns: ['Chansons', 'Étoiles', 'Forêts', 'Fenêtres', 'Lumières', 'Rivières', 'Âmes', 'Fièvres', 'Mélodies', 'Nuits'],
  },
  {
    article: 'Die',
    adjectiveFirst: true,
    adjectives: ['Grüne', 'Schöne', 'Böse', 'Süße', 'Weiße', 'Müde', 'Große', 'Kühle', 'Späte', 'Fröhliche'],
    nouns: ['Wälder', 'Grüße', 'Mädchen', 'Träume', 'Nächte', 'Straßen', 'Lieder', 'Märchen', 'Brücken', 'Flüsse'],
  },
  {
    article: 'The',
    adjectiveFirst: true,
    adjectives: ['Silver', 'Velvet', 'Electric', 'Quiet', 'Golden', 'Hollow', 'Neon', 'Paper', 'Wild', 'Midnight'],
    nouns: ['Owls', 'Harbours', 'Rivers', 'Machines', 'Lanterns', 'Echoes', 'Satellites', 'Foxes', 'Tides', 'Mirrors'],
  },
];

/** An adjective and a noun of `language`, in its order ("Canções Douradas", "Grüne Wälder"). */
export function phrase(random: Random, language: Language): string {
  const adjective = pick(random, language.adjectives);
  const noun = pick(random, language.nouns);
  return language.adjectiveFirst ? `${adjective} ${noun}` : `${noun} ${adjective}`;
}
